// sentDir is shared with the ERP group. With `sentTemplate: "{date}/{fileName}"`, a member of that
// group makes today's sub-folder a link into the private stateDir and drops an interchange named
// like a journal file: the archive must not follow the link. The file is uploaded, stays in
// processing (archiving is retried, never lost) and the refusal is logged with its code.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, startCli } from '../../helpers/daemon-child.js';
import { makeDaemonWorld, type DaemonWorld } from '../../helpers/daemon-config.js';
import { x12 } from '../../helpers/edi.js';

const worlds: DaemonWorld[] = [];
afterEach(() => worlds.splice(0).forEach((w) => w.cleanup()));

describe('outbound: a link under a sentTemplate sub-folder', () => {
  it('is never followed: nothing lands in stateDir, the file stays in processing, FILES_UNSAFE_ENTRY is logged', async () => {
    const w = makeDaemonWorld(
      {},
      { outbox: { dir: './outbox', sentDir: './sent', errorDir: './error', stableMs: '100ms', sentTemplate: '{date}/{fileName}' } },
    );
    worlds.push(w);
    fs.mkdirSync(w.outbox, { recursive: true });
    fs.mkdirSync(w.sent, { recursive: true });
    fs.mkdirSync(w.state, { recursive: true });
    const today = new Date().toISOString().slice(0, 10);
    fs.symlinkSync(w.state, path.join(w.sent, today));
    fs.writeFileSync(path.join(w.outbox, 'journal.sqlite-evil'), x12(77));

    const daemon = startCli(['run', '-c', w.configFile], {}, w.dir);
    await daemon.waitFor(/"code":"FILES_UNSAFE_ENTRY"[^\n]*cannot archive yet/, 30_000);
    daemon.kill('SIGTERM');
    await daemon.exited;
    expect(fs.readdirSync(w.state)).not.toContain('journal.sqlite-evil');
    expect(fs.lstatSync(path.join(w.sent, today)).isSymbolicLink()).toBe(true);
    expect(fs.readdirSync(path.join(w.state, 'processing')).some((f) => f.endsWith('journal.sqlite-evil'))).toBe(true);

    // Once the link is gone, the next run archives the file where the template says.
    fs.unlinkSync(path.join(w.sent, today));
    expect(runCli(['once', '-c', w.configFile], {}, w.dir).status).toBe(0);
    expect(fs.readdirSync(path.join(w.sent, today))).toEqual(['journal.sqlite-evil']);
    expect(fs.lstatSync(path.join(w.sent, today)).isDirectory()).toBe(true);
  });
});
