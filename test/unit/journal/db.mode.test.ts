// The journal holds file names, paths and parcel ids: nobody but gridsync's user reads it, whatever
// the umask it was started with (issue 11: with umask 022 it was 0644).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Journal } from '../../../src/journal/index.js';

let dir: string | undefined;
let oldUmask: number | undefined;
afterEach(() => {
  if (oldUmask !== undefined) process.umask(oldUmask);
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('journal file modes', () => {
  it('journal, WAL, shared memory and lock file are 0600 under umask 022, and stateDir is created 0700', async () => {
    oldUmask = process.umask(0o022);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-mode-'));
    const state = path.join(dir, 'state');
    const j = Journal.open(path.join(state, 'journal.sqlite'));
    try {
      for (const f of ['journal.sqlite', 'journal.sqlite-wal', 'journal.sqlite-shm', 'journal.sqlite.lock']) {
        expect([f, (fs.statSync(path.join(state, f)).mode & 0o777).toString(8)]).toEqual([f, '600']);
      }
      expect(fs.statSync(state).mode & 0o777).toBe(0o700);
    } finally {
      await j.close();
    }
  });

  it('a journal left readable by others is tightened at open', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-mode-'));
    const file = path.join(dir, 'journal.sqlite');
    await Journal.open(file).close();
    fs.chmodSync(file, 0o644);
    await Journal.open(file).close();
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  });
});
