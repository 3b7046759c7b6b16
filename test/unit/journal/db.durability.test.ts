import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Journal } from '../../../src/journal/db.js';
import { MIGRATIONS } from '../../../src/journal/migrations.js';
import { distUrl, runModuleChild } from '../../helpers/journal-child.js';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-journal-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('journal durability settings', () => {
  it('sets WAL and synchronous=FULL on every open, not only the first', () => {
    const file = path.join(dir, 'j.sqlite');
    for (let i = 0; i < 2; i++) {
      const j = Journal.open(file);
      expect(j.db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(j.db.pragma('synchronous', { simple: true })).toBe(2);
      expect(j.db.pragma('busy_timeout', { simple: true })).toBeGreaterThan(0);
      j.close();
    }
  });

  it('applies every migration once and records the version', () => {
    const file = path.join(dir, 'j.sqlite');
    Journal.open(file).close();
    const j = Journal.open(file);
    expect(j.db.pragma('user_version', { simple: true })).toBe(MIGRATIONS.at(-1)?.version);
    j.close();
  });

  it('keeps committed events across a SIGKILL of the writer', async () => {
    const file = path.join(dir, 'j.sqlite');
    const child = runModuleChild(`
      const { Journal } = await import(${JSON.stringify(distUrl('journal/db.js'))});
      const j = Journal.open(${JSON.stringify(file)});
      for (let i = 0; i < 50; i++) j.transaction(() => j.recordEvent({ direction: 'in', mailboxId: 1, item: i, from: 'a', to: 'b' }));
      console.log('committed');
      setInterval(() => {}, 1000);
    `);
    await child.waitFor(/committed/);
    child.kill('SIGKILL');
    await child.exited;
    const j = Journal.open(file);
    expect(j.db.prepare('SELECT count(*) AS n FROM events').get()).toEqual({ n: 50 });
    expect(j.integrityCheck()).toEqual(['ok']);
    j.close();
  });

  it('prunes events older than the retention and keeps meta values', () => {
    let t = 1_000_000;
    const j = Journal.open(path.join(dir, 'j.sqlite'), { now: () => t });
    j.transaction(() => j.recordEvent({ direction: 'daemon', item: 'old' }));
    t += 10_000;
    j.transaction(() => j.recordEvent({ direction: 'daemon', item: 'new', detail: { why: 'kept' } }));
    expect(j.pruneEvents(5_000)).toBe(1);
    expect(j.db.prepare('SELECT item, detail FROM events').all()).toEqual([{ item: 'new', detail: '{"why":"kept"}' }]);
    j.setMeta('lastCycle', '1');
    j.setMeta('lastCycle', '2');
    expect(j.getMeta('lastCycle')).toBe('2');
    expect(j.getMeta('missing')).toBeUndefined();
    j.close();
  });
});
