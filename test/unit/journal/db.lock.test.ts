import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Journal } from '../../../src/journal/db.js';
import { JournalLockedError } from '../../../src/journal/sqlite-lock.js';
import { distUrl, runModuleChild } from '../../helpers/journal-child.js';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-journal-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const holdLock = (file: string) =>
  runModuleChild(`
    const { Journal } = await import(${JSON.stringify(distUrl('journal/db.js'))});
    // Held in a global: an unreferenced Journal is garbage-collected, and better-sqlite3 closes
    // its lock database with it, which would free the lock while the holder still runs.
    globalThis.holder = Journal.open(${JSON.stringify(file)});
    console.log('locked');
    setInterval(() => {}, 1000);
  `);

describe('journal single-daemon lock', () => {
  it('refuses a second process with the holder pid, and frees the lock when the holder is SIGKILLed', async () => {
    const file = path.join(dir, 'journal.sqlite');
    const holder = holdLock(file);
    await holder.waitFor(/locked/);

    let refused: unknown;
    try {
      Journal.open(file);
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(JournalLockedError);
    expect((refused as JournalLockedError).holderPid).toBe(holder.pid);
    expect((refused as Error).message).toContain(`pid ${holder.pid}`);

    holder.kill('SIGKILL');
    expect((await holder.exited).signal).toBe('SIGKILL');
    const j = Journal.open(file);
    expect(j.integrityCheck()).toEqual(['ok']);
    await j.close();
  });

  it('lets a read-only reader in while the daemon holds the lock', async () => {
    const file = path.join(dir, 'journal.sqlite');
    const holder = holdLock(file);
    await holder.waitFor(/locked/);
    const reader = Journal.open(file, { readonly: true });
    expect(reader.db.prepare('SELECT count(*) AS n FROM events').get()).toEqual({ n: 0 });
    await reader.close();
    holder.kill('SIGKILL');
    await holder.exited;
  });

  it('is released by close(), and close() is safe twice', async () => {
    const file = path.join(dir, 'journal.sqlite');
    const a = Journal.open(file);
    expect(() => Journal.open(file)).toThrow(JournalLockedError);
    await a.close();
    await a.close();
    const b = Journal.open(file);
    await b.close();
    expect(fs.existsSync(`${file}.lock.pid`)).toBe(false);
  });
});
