// From verified calls to cycles (issue 23): a flood of calls for one mailbox becomes at most one
// cycle request per second, the calls within the gap one request at its end; mailboxes are apart.
import { describe, expect, it } from 'vitest';
import { CallbackTrigger } from '../../../src/callbacks/index.js';

function fakeClock() {
  let now = 0;
  const timers: { at: number; fn: () => void; id: number }[] = [];
  let next = 1;
  return {
    now: () => now,
    timers: {
      set: (fn: () => void, ms: number) => {
        const id = next++;
        timers.push({ at: now + ms, fn, id });
        return id;
      },
      clear: (h: unknown) => {
        const i = timers.findIndex((t) => t.id === h);
        if (i >= 0) timers.splice(i, 1);
      },
    },
    /** The wall clock is set by `ms`: readings jump, timers still fire after their delay. */
    step(ms: number) {
      now += ms;
      for (const t of timers) t.at += ms;
    },
    advance(ms: number) {
      const end = now + ms;
      for (;;) {
        timers.sort((a, b) => a.at - b.at);
        const t = timers[0];
        if (!t || t.at > end) break;
        timers.shift();
        now = t.at;
        t.fn();
      }
      now = end;
    },
  };
}

describe('CallbackTrigger', () => {
  it('turns a flood into at most one cycle request per second per mailbox, losing none of the calls', () => {
    const clock = fakeClock();
    const fired: [number, number][] = [];
    const t = new CallbackTrigger((id) => fired.push([id, clock.now()]), 1000, clock.now, clock.timers);
    t.poke(1001);
    expect(fired).toEqual([[1001, 0]]);
    for (let i = 0; i < 500; i++) {
      t.poke(1001);
      clock.advance(5);
    }
    clock.advance(2000);
    const times = fired.filter(([id]) => id === 1001).map(([, at]) => at);
    for (let i = 1; i < times.length; i++) expect((times[i] as number) - (times[i - 1] as number)).toBeGreaterThanOrEqual(1000);
    // 2.5 s of calls: the first at once, then one per second; the last calls are not dropped.
    expect(times.length).toBeGreaterThanOrEqual(3);
    expect(times.at(-1)).toBeGreaterThanOrEqual(2495);
    t.poke(1002);
    expect(fired.at(-1)).toEqual([1002, clock.now()]);
  });

  it('a wall clock stepped back an hour holds a mailbox for one gap, not for the hour', () => {
    const clock = fakeClock();
    const fired: number[] = [];
    const t = new CallbackTrigger((id) => fired.push(id), 1000, clock.now, clock.timers);
    clock.advance(10_000);
    t.poke(1001);
    clock.step(-3_600_000);
    t.poke(1001);
    clock.advance(1000);
    expect(fired).toEqual([1001, 1001]);
  });

  it('requests nothing after close', () => {
    const clock = fakeClock();
    const fired: number[] = [];
    const t = new CallbackTrigger((id) => fired.push(id), 1000, clock.now, clock.timers);
    t.poke(1);
    t.poke(1);
    t.close();
    clock.advance(5000);
    t.poke(1);
    expect(fired).toEqual([1]);
  });
});
