// A file in errorDir whose journal row is gone: retention drops an in_error row once its file has
// been away from errorDir past retention.journalDays, and the operator may bring the file back (or
// restore an older journal). `requeue` said "requeued … (sent even if a duplicate)" for such a file
// under --force and exited 0, with nothing recorded to keep that promise: the duplicate check would
// refuse the file again. Now --force refuses it and says why and what to do; a plain requeue moves
// it and says it goes out as a new file.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Journal } from '../../../src/journal/index.js';
import { makeDaemonWorld, type DaemonWorld } from '../../helpers/daemon-config.js';
import { runCli } from '../../helpers/daemon-child.js';

const worlds: DaemonWorld[] = [];
afterEach(() => worlds.splice(0).forEach((w) => w.cleanup()));

describe('requeue of a file the journal holds no record of', () => {
  it('--force refuses it with the reason and the way on; a plain requeue moves it, saying so', async () => {
    const w = makeDaemonWorld();
    worlds.push(w);
    fs.mkdirSync(w.outbox, { recursive: true });
    fs.writeFileSync(path.join(w.outbox, 'bad.x12'), 'not an interchange');
    expect(runCli(['once', '-c', w.configFile]).status).toBe(1);
    expect(fs.existsSync(path.join(w.error, 'bad.x12'))).toBe(true);
    // What retention's delete leaves: the file in errorDir, its row gone.
    const j = Journal.open(path.join(w.state, 'journal.sqlite'));
    try {
      expect(await j.maintain("DELETE FROM outbound_files WHERE state = 'in_error'")).toBe(1);
    } finally {
      await j.close();
    }

    const forced = runCli(['requeue', '-c', w.configFile, '--force', 'bad.x12']);
    expect(forced.status).toBe(1);
    expect(forced.stdout).toBe('');
    expect(forced.stderr).toMatch(/^not requeued .*bad\.x12: the journal holds no record of this file .*Requeue it without --force/);
    expect(forced.stderr).not.toMatch(/\n\s+at /);
    expect(fs.existsSync(path.join(w.error, 'bad.x12'))).toBe(true);

    const plain = runCli(['requeue', '-c', w.configFile, 'bad.x12']);
    expect(plain.status, plain.stderr).toBe(0);
    expect(plain.stdout).toMatch(
      /^requeued .*bad\.x12 → .*bad\.x12 \(the journal holds no record of this file .*: it is checked and sent as a new file\)/,
    );
    expect(fs.existsSync(path.join(w.outbox, 'bad.x12'))).toBe(true);
    expect(fs.existsSync(path.join(w.error, 'bad.x12'))).toBe(false);
  });
});
