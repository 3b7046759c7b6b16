// Group commit from the outside: how many WAL fsyncs (one per transaction) a pattern of commits
// costs, counted on node:fs, with setTimeout faked so that a commit that lingers cannot resolve
// until the test lets its window pass. The burst's pace is set on a fake clock too (performance.now,
// which the group commit reads to tell a burst): on a loaded machine real commits 0.3 ms apart
// arrived milliseconds apart, no burst was seen, and all 20 committed at once (seen in a full run).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Journal } from '../../../src/journal/db.js';

let dir: string;
let journal: Journal;
let walSyncs: number;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-journal-'));
  journal = Journal.open(path.join(dir, 'j.sqlite'));
  walSyncs = 0;
  // Each WAL fsync is real but ends before the next loop turn (fsyncSync, then the callback): a
  // fast disk. A slow one would batch commits by itself (they wait while an fsync runs) and hide
  // whether lingering does.
  vi.spyOn(fs, 'fsync').mockImplementation((fd, cb) => {
    walSyncs++;
    let err: NodeJS.ErrnoException | null = null;
    try {
      fs.fsyncSync(fd);
    } catch (e) {
      err = e as NodeJS.ErrnoException;
    }
    process.nextTick(cb, err);
  });
});
afterEach(async () => {
  vi.useRealTimers();
  vi.restoreAllMocks();
  await journal.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const write = (k: number) => () => journal.setMeta(`k${k}`, String(k));
const FAKE: Parameters<typeof vi.useFakeTimers>[0] = { toFake: ['setTimeout', 'clearTimeout', 'performance'] };
const turns = async (n: number): Promise<void> => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

describe('journal group commit', () => {
  it('a lone commit that may linger is not delayed: it commits without any timer firing', async () => {
    vi.useFakeTimers(FAKE);
    await journal.commit(write(1), { linger: true });
    expect(await journal.getMeta('k1')).toBe('1');
    expect(walSyncs).toBe(1);
  });

  it('in a burst, lingering commits share one transaction and one WAL fsync', async () => {
    vi.useFakeTimers(FAKE);
    // Commits one every 0.3 ms, the loop turning in between (as parcels finish their steps).
    const done: boolean[] = [];
    const all: Promise<void>[] = [];
    for (let k = 0; k < 20; k++) {
      all.push(journal.commit(write(k), { linger: true }).then(() => void (done[k] = true)));
      await turns(1); // a flush due now runs here
      vi.advanceTimersByTime(0.3);
    }
    await turns(5);
    const before = walSyncs;
    // The first commits went out alone (no burst known yet); the rest wait for the window.
    expect(done.filter(Boolean).length).toBeLessThan(20);
    // The window passes. An fsync still running on the thread pool (a loaded machine) arms the next
    // window only when it ends, after this first advance: keep letting windows pass until all are in.
    let settled = false;
    const everything = Promise.all(all).then(() => void (settled = true));
    for (let i = 0; i < 2000 && !settled; i++) {
      await vi.advanceTimersByTimeAsync(10);
      if (!settled) await new Promise((r) => setImmediate(r));
    }
    await everything;
    expect(walSyncs - before).toBeLessThanOrEqual(1);
    expect(walSyncs).toBeLessThanOrEqual(5); // without lingering: one fsync per commit or two
    for (let k = 0; k < 20; k++) expect(await journal.getMeta(`k${k}`)).toBe(String(k));
  });

  it('a commit that may not linger takes the lingering ones along at once', async () => {
    vi.useFakeTimers(FAKE);
    const lingering: Promise<void>[] = [];
    for (let k = 0; k < 10; k++) {
      lingering.push(journal.commit(write(k), { linger: true }));
      await turns(1);
      vi.advanceTimersByTime(0.3);
    }
    // No timer is advanced: only the plain commit can flush them.
    await journal.commit(write(99));
    await Promise.all(lingering);
    expect(await journal.getMeta('k9')).toBe('9');
    expect(await journal.getMeta('k99')).toBe('99');
  });

  it('a batch in which nothing throws runs without savepoints; one that throws is run again, each in a savepoint, and undone alone', async () => {
    const statements: string[] = [];
    const statement = journal.statement.bind(journal);
    vi.spyOn(journal, 'statement').mockImplementation((sql: string) => (statements.push(sql), statement(sql)));
    const ran = new Map<number, number>();
    const item = (k: number, fail = false) =>
      journal.commit(async (tx) => {
        ran.set(k, (ran.get(k) ?? 0) + 1);
        await tx.write(1, "INSERT INTO meta (key, value) VALUES (?, 'x')", `item${k}`);
        if (fail) throw new Error(`item ${k} refused`);
        return k;
      });
    // Asked in one loop turn: one batch.
    expect(await Promise.all([item(1), item(2), item(3)])).toEqual([1, 2, 3]);
    expect(statements.filter((s) => s.startsWith('SAVEPOINT'))).toEqual([]);
    expect([...ran.values()]).toEqual([1, 1, 1]);

    statements.length = 0;
    const settled = await Promise.allSettled([item(4), item(5, true), item(6)]);
    expect(settled.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(statements.filter((s) => s.startsWith('SAVEPOINT'))).toHaveLength(3); // the second run only
    expect([ran.get(4), ran.get(5), ran.get(6)]).toEqual([2, 2, 1]); // the first run stopped at 5
    expect(await journal.getMeta('item4')).toBe('x');
    expect(await journal.getMeta('item5')).toBeUndefined();
    expect(await journal.getMeta('item6')).toBe('x');
  });
});
