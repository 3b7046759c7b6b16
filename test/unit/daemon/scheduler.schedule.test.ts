import { describe, expect, it } from 'vitest';
import { backoffDelay, CronWindows, CycleScheduler } from '../../../src/daemon/scheduler.js';
import { FakeClock } from '../../helpers/daemon-clock.js';

describe('backoffDelay', () => {
  it('is the poll interval without failures, then doubles up to the cap', () => {
    expect(backoffDelay(0, 5000)).toBe(5000);
    expect([1, 2, 3, 4, 5, 6, 7, 8].map((f) => backoffDelay(f, 5000))).toEqual([
      5000, 10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000,
    ]);
    expect(backoffDelay(1000, 5000)).toBe(300_000);
  });

  it('never hammers: at least one second even with a tiny poll interval', () => {
    expect(backoffDelay(1, 10)).toBe(1000);
    expect(backoffDelay(3, 10, 60_000)).toBe(4000);
  });
});

describe('CronWindows', () => {
  it('matches whole seconds in the configured timezone', () => {
    const w = new CronWindows(['0 2 * * *'], 'Europe/Berlin');
    // 02:00 in Berlin on 22 Nov 2026 (CET, UTC+1) is 01:00 UTC.
    const at = Date.UTC(2026, 10, 22, 1, 0, 0);
    expect(w.opensBetween(at - 1000, at)).toBe(true);
    expect(w.opensBetween(at - 2000, at - 1000)).toBe(false);
    expect(w.opensBetween(at, at + 59_000)).toBe(false);
    // The same expression in UTC opens an hour later.
    const utc = new CronWindows(['0 2 * * *'], 'UTC');
    expect(utc.opensBetween(at - 1000, at)).toBe(false);
    expect(utc.opensBetween(at + 3_599_000, at + 3_600_000)).toBe(true);
  });

  it('catches a window the process slept through, however long it slept', () => {
    const w = new CronWindows(['30 12 * * 1-5'], 'UTC');
    const monday = Date.UTC(2026, 10, 23, 12, 30, 0);
    expect(w.opensBetween(monday - 10_000, monday + 60_000)).toBe(true);
    expect(w.opensBetween(monday - 10_000, monday + 3_600_000)).toBe(true);
    expect(w.opensBetween(monday - 3 * 86_400_000, monday - 86_400_000 * 2 + 1000)).toBe(false); // Friday 12:30 to Saturday
    const sunday = Date.UTC(2026, 10, 22, 12, 30, 0);
    expect(w.opensBetween(sunday - 1000, sunday)).toBe(false);
  });
});

function recorder(clock: FakeClock, outcomes: boolean[] = []) {
  const runs: { reason: string; at: number; only?: number[] }[] = [];
  let active = 0;
  let maxActive = 0;
  let release: (() => void) | undefined;
  const holdNext = { on: false };
  const cycle = async (reason: string, only?: ReadonlySet<number>): Promise<boolean> => {
    runs.push({ reason, at: clock.now(), ...(only ? { only: [...only] } : {}) });
    active++;
    maxActive = Math.max(maxActive, active);
    if (holdNext.on) await new Promise<void>((r) => (release = r));
    active--;
    return outcomes.shift() ?? true;
  };
  return { runs, cycle, holdNext, release: () => release?.(), maxActive: () => maxActive };
}

describe('CycleScheduler (fake clock)', () => {
  it('polls at the interval, starting at once', async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const r = recorder(clock);
    const s = new CycleScheduler({ pollMs: 30_000, cycle: r.cycle, now: clock.now, timers: clock });
    s.start();
    await clock.advance(95_000);
    expect(r.runs.map((x) => x.at - Date.UTC(2026, 0, 1))).toEqual([0, 30_000, 60_000, 90_000]);
    s.stop();
    await clock.advance(60_000);
    expect(r.runs).toHaveLength(4);
    expect(clock.pendingDelays()).toEqual([]);
  });

  it('backs off after failures and returns to the interval after a success', async () => {
    const t0 = Date.UTC(2026, 0, 1);
    const clock = new FakeClock(t0);
    const r = recorder(clock, [false, false, false, true, true]);
    const s = new CycleScheduler({ pollMs: 5000, cycle: r.cycle, now: clock.now, timers: clock });
    s.start();
    await clock.advance(100_000);
    const at = r.runs.map((x) => x.at - t0);
    // fail at 0 → +5s, fail → +10s, fail → +20s, success at 35s → poll again every 5s
    expect(at.slice(0, 6)).toEqual([0, 5000, 15_000, 35_000, 40_000, 45_000]);
    expect(s.failures).toBe(0);
    s.stop();
  });

  it('a wall clock stepped back during a cycle does not push the next poll back by the step', async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const r = recorder(clock);
    const s = new CycleScheduler({ pollMs: 30_000, cycle: r.cycle, now: clock.now, timers: clock });
    r.holdNext.on = true;
    s.start();
    await clock.advance(1000);
    clock.step(-10 * 60_000); // NTP corrects a clock that ran ten minutes fast
    r.holdNext.on = false;
    r.release();
    await clock.advance(10);
    expect(clock.pendingDelays().every((d) => d <= 30_000)).toBe(true);
    await clock.advance(30_000);
    expect(r.runs).toHaveLength(2);
    s.stop();
  });

  it('never overlaps: a trigger during a cycle runs once right after it', async () => {
    const clock = new FakeClock(0);
    const r = recorder(clock);
    const s = new CycleScheduler({ pollMs: 60_000, cycle: r.cycle, now: clock.now, timers: clock });
    r.holdNext.on = true;
    s.start();
    await clock.advance(10);
    s.trigger('watch');
    s.trigger('watch');
    s.trigger('watch');
    expect(r.runs).toHaveLength(1);
    r.holdNext.on = false;
    r.release();
    await clock.advance(10);
    expect(r.runs.map((x) => x.reason)).toEqual(['start', 'again']);
    expect(r.maxActive()).toBe(1);
    s.stop();
  });

  it("a mailbox's trigger cycles it alone, merged while a cycle runs, and never moves or swallows the full poll", async () => {
    const clock = new FakeClock(0);
    const r = recorder(clock, [true, false]);
    const s = new CycleScheduler({ pollMs: 60_000, cycle: r.cycle, now: clock.now, timers: clock });
    s.start();
    await clock.advance(10_000);
    // Alone, and a failure of it is no failed cycle: the poll stays at 60 s, without backoff.
    s.trigger('callback', 7);
    await clock.advance(10);
    r.holdNext.on = true;
    s.trigger('callback', 7);
    await clock.advance(10);
    s.trigger('callback', 8);
    s.trigger('callback', 7);
    r.holdNext.on = false;
    r.release();
    await clock.advance(10);
    expect(r.runs.map((x) => [x.reason, x.at, x.only])).toEqual([
      ['start', 0, undefined],
      ['callback', 10_000, [7]],
      ['callback', 10_010, [7]],
      ['again', 10_020, [8, 7]],
    ]);
    // A poll due while a mailbox's cycle runs comes right after it, in full.
    await clock.advance(49_000);
    r.holdNext.on = true;
    s.trigger('callback', 8);
    await clock.advance(1000);
    r.holdNext.on = false;
    r.release();
    await clock.advance(10);
    expect(r.runs.slice(4).map((x) => [x.reason, x.only])).toEqual([
      ['callback', [8]],
      ['again', undefined],
    ]);
    expect(r.maxActive()).toBe(1);
    s.stop();
  });

  it('with cron windows: runs only when a window opens (in the timezone), retries a failed window with backoff', async () => {
    // 01:59:50 UTC; the window "0 2 * * *" in Europe/Berlin opened at 01:00 UTC, next one tomorrow.
    const t0 = Date.UTC(2026, 10, 22, 0, 59, 50);
    const clock = new FakeClock(t0);
    const r = recorder(clock, [false, true]);
    const windows = new CronWindows(['0 2 * * *'], 'Europe/Berlin');
    const s = new CycleScheduler({ pollMs: 30_000, windows, cycle: r.cycle, now: clock.now, timers: clock });
    s.start();
    await clock.advance(9_000);
    expect(r.runs).toHaveLength(0);
    await clock.advance(2_000);
    expect(r.runs.map((x) => x.reason)).toEqual(['window']);
    expect(Math.floor(r.runs[0]!.at / 1000) * 1000).toBe(Date.UTC(2026, 10, 22, 1, 0, 0));
    await clock.advance(31_000); // the failed window is retried after the poll interval
    expect(r.runs.map((x) => x.reason)).toEqual(['window', 'retry']);
    await clock.advance(3_600_000); // then nothing until the next window
    expect(r.runs).toHaveLength(2);
    await clock.advance(86_400_000 - 3_642_000 + 12_000);
    expect(r.runs.map((x) => x.reason)).toEqual(['window', 'retry', 'window']);
    s.stop();
    await windows.close();
  });

  it('with cron windows: a window the wall clock jumped over (a VM resumed, an NTP step) opens once, late, not a day later', async () => {
    // 01:50 in Berlin; the VM is suspended until 04:00, past the window at 02:00 (01:00 UTC).
    const t0 = Date.UTC(2026, 10, 22, 0, 50, 0);
    const clock = new FakeClock(t0);
    const r = recorder(clock);
    const windows = new CronWindows(['0 2 * * *'], 'Europe/Berlin');
    const s = new CycleScheduler({ pollMs: 30_000, windows, cycle: r.cycle, now: clock.now, timers: clock });
    s.start();
    await clock.advance(2_000);
    clock.step(2 * 3_600_000);
    await clock.advance(2_000);
    expect(r.runs.map((x) => x.reason)).toEqual(['window']);
    expect(r.runs[0]!.at).toBeGreaterThan(Date.UTC(2026, 10, 22, 2, 50, 0));
    await clock.advance(3_600_000); // once: the window is not opened again
    expect(r.runs).toHaveLength(1);
    await clock.advance(86_400_000); // and the next night's as usual
    expect(r.runs.map((x) => x.reason)).toEqual(['window', 'window']);
    s.stop();
    await windows.close();
  });

  it('with cron windows and a follow-up: inbound runs once more after the window (the acknowledgments of what it sent)', async () => {
    const t0 = Date.UTC(2026, 10, 22, 0, 59, 50);
    const clock = new FakeClock(t0);
    const r = recorder(clock);
    const windows = new CronWindows(['0 2 * * *'], 'Europe/Berlin');
    const s = new CycleScheduler({ pollMs: 30_000, windows, cycle: r.cycle, now: clock.now, timers: clock, windowFollowUpMs: 600_000 });
    s.start();
    await clock.advance(11_000);
    expect(r.runs.map((x) => x.reason)).toEqual(['window']);
    await clock.advance(599_000);
    expect(r.runs.map((x) => x.reason)).toEqual(['window']);
    await clock.advance(2_000);
    expect(r.runs.map((x) => x.reason)).toEqual(['window', 'window-follow-up']);
    expect(r.runs[1]!.at - r.runs[0]!.at).toBeGreaterThanOrEqual(600_000);
    await clock.advance(3_600_000); // one follow-up, not a new polling loop
    expect(r.runs).toHaveLength(2);
    s.stop();
    await windows.close();
  });
});

describe('CronWindows computes the next run (croner), it does not scan seconds', () => {
  it('a window at 02:00 Berlin is found anywhere in a five-minute lookback, and once only', () => {
    const w = new CronWindows(['0 2 * * *', '30 12 * * 1-5'], 'Europe/Berlin');
    const at = Date.parse('2026-01-15T01:00:00Z'); // 02:00 in Berlin (CET)
    expect(w.opensBetween(at - 299_000, at + 1000)).toBe(true);
    expect(w.opensBetween(at, at + 299_000)).toBe(false);
    // 12:30 Berlin on a Thursday, with a seconds field expression beside it.
    const noon = Date.parse('2026-01-15T11:30:00Z');
    expect(w.opensBetween(noon - 1000, noon)).toBe(true);
    expect(
      new CronWindows(['30 0 2 * * *'], 'UTC').opensBetween(Date.parse('2026-01-15T02:00:29Z'), Date.parse('2026-01-15T02:00:30Z')),
    ).toBe(true);
  });
});
