import v8 from 'node:v8';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { TrailingWork } from '../../../src/work/index.js';

/** A promise settled from outside. */
function deferred(): { promise: Promise<void>; resolve: () => void; reject: (e: unknown) => void } {
  let resolve!: () => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

const turns = async (n = 5): Promise<void> => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

describe('TrailingWork: the local work after a download, bounded', () => {
  it('lets a parcel on at once below the bound, and one waiter on per finished piece at it', async () => {
    const work = new TrailingWork(() => undefined);
    const pieces = [deferred(), deferred()];
    for (const p of pieces) work.add(p.promise);
    let passed = 0;
    const waiters = [work.room(() => 2).then(() => passed++), work.room(() => 2).then(() => passed++)];
    await turns();
    expect(passed).toBe(0);
    pieces[0]?.resolve();
    await turns();
    expect(passed).toBe(1);
    pieces[1]?.resolve();
    await Promise.all(waiters);
    expect(passed).toBe(2);
    await work.room(() => 2); // empty: at once
  });

  it('hands a piece that threw to onError and frees its room', async () => {
    const heard: unknown[] = [];
    const work = new TrailingWork((err) => heard.push(err));
    const piece = deferred();
    work.add(piece.promise);
    const waiting = work.room(() => 1);
    piece.reject(new Error('disk gone'));
    await waiting;
    expect(heard).toHaveLength(1);
    expect((heard[0] as Error).message).toBe('disk gone');
    expect(work.size).toBe(0);
  });

  it('wakes every waiter when the last piece finishes, even if the bound shrank below what ran', async () => {
    const work = new TrailingWork(() => undefined);
    const pieces = [deferred(), deferred(), deferred()];
    for (const p of pieces) work.add(p.promise);
    let bound = 3;
    const waiters = Array.from({ length: 4 }, () => work.room(() => bound));
    bound = 1;
    for (const p of pieces) p.resolve();
    await Promise.all(waiters); // would hang if a wake-up were lost
    expect(work.size).toBe(0);
  });

  it('drains pieces that pieces add', async () => {
    const work = new TrailingWork(() => undefined);
    const inner = deferred();
    let innerDone = false;
    const outer = deferred();
    work.add(
      outer.promise.then(() => {
        work.add(inner.promise.then(() => void (innerDone = true)));
      }),
    );
    const drained = work.drain();
    outer.resolve();
    await turns();
    inner.resolve();
    await drained;
    expect(innerDone).toBe(true);
  });

  it('keeps nothing of a waiter on a piece that stays unfinished while thousands pass', async () => {
    // One piece hangs (a confirm waiting out its deadline) while the others flow: every wait used
    // to attach a reaction to it (Promise.race), kept until it settled — memory grew with traffic.
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    const work = new TrailingWork(() => undefined);
    const hanging = deferred();
    work.add(hanging.promise);
    const flow = async (n: number): Promise<void> => {
      for (let i = 0; i < n; i++) {
        const piece = deferred();
        work.add(piece.promise);
        const waiting = work.room(() => 2);
        piece.resolve();
        await waiting;
      }
    };
    await flow(2_000);
    gc();
    const before = process.memoryUsage().heapUsed;
    await flow(100_000);
    gc();
    const grown = process.memoryUsage().heapUsed - before;
    // Promise.race kept ~300 bytes per wait here (31 MB); what passes through must not stay.
    expect(grown).toBeLessThan(4 * 1024 * 1024);
    hanging.resolve();
    await work.drain();
  });
});
