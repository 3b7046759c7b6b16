// `gridsync requeue` moves a file from errorDir back into the outbox: the move must survive a power
// cut, so both folders are fsynced after the rename (it renamed without any fsync). Checked on the
// real system calls with strace; skipped with a notice where strace is missing.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { x12 } from '../../helpers/edi.js';
import { repoRoot } from '../../helpers/journal-child.js';
import { listFiles, makeWorld, outboundPipeline, type TestWorld } from '../../helpers/world.js';
import { prerequisite, runs } from '../../helpers/require-tool.js';

const strace = prerequisite('strace', runs('strace', '-V'), 'the fsyncs of gridsync requeue are not checked');

let w: TestWorld;
beforeEach(async () => {
  w = await makeWorld();
});
afterEach(async () => w.close());

describe.skipIf(!strace)('gridsync requeue is durable', () => {
  it('fsyncs the outbox and the errorDir after moving the file back', async () => {
    fs.writeFileSync(path.join(w.dirs.outbox, 'first.x12'), x12(5));
    fs.writeFileSync(path.join(w.dirs.outbox, 'second.x12'), x12(5));
    await outboundPipeline(w, { stableMs: 20 }).runCycle();
    const dup = listFiles(w.dirs.error).find((f) => !f.endsWith('.json')) as string;
    const cfg = path.join(w.root, 'gridsync.yaml');
    fs.writeFileSync(
      cfg,
      `api: { baseUrl: "${w.emu.url}", apiKey: demo-key-1001 }\nstateDir: ${w.dirs.state}\nmailboxes:\n  - mailboxId: 1001\n    outbox: { dir: ${w.dirs.outbox}, sentDir: ${w.dirs.sent}, errorDir: ${w.dirs.error} }\n`,
    );
    const trace = path.join(w.root, 'strace.out');
    const r = spawnSync(
      'strace',
      [
        '-f',
        '-qq',
        '-e',
        'trace=openat,fsync,fdatasync,rename,renameat,renameat2,close',
        '-o',
        trace,
        process.execPath,
        path.join(repoRoot, 'dist/cli/main.js'),
        'requeue',
        '-c',
        cfg,
        dup,
      ],
      { encoding: 'utf8', timeout: 60_000 },
    );
    expect(r.status).toBe(0);
    expect(listFiles(w.dirs.outbox)).toEqual([dup]);
    const lines = fs.readFileSync(trace, 'utf8').split('\n');
    const renamedAt = lines.findIndex((l) => /rename/.test(l) && l.includes(path.join(w.dirs.error, dup)));
    expect(renamedAt).toBeGreaterThanOrEqual(0);
    // Each folder: opened as a directory after the rename, and that descriptor fsynced.
    const fsyncedAfterRename = (dir: string): boolean => {
      const open = new RegExp(`openat\\([^"]*"${dir.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}", [^)]*O_DIRECTORY[^)]*\\) = (\\d+)`);
      for (let i = renamedAt; i < lines.length; i++) {
        const m = open.exec(lines[i] as string);
        if (!m) continue;
        if (lines.slice(i + 1).some((l) => new RegExp(`f(data)?sync\\(${m[1]}\\)\\s+= 0`).test(l))) return true;
      }
      return false;
    };
    expect(fsyncedAfterRename(w.dirs.outbox)).toBe(true);
    expect(fsyncedAfterRename(w.dirs.error)).toBe(true);
  }, 90_000);
});
