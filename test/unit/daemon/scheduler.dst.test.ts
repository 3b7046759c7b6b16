// Cron windows across daylight saving changes, in zones that have them: no window is lost for the
// day, and a fixed time opens once. A time the clock skips opens its window when the gap ends; a
// time it repeats opens once when the expression names fixed times (lists and ranges too, as in
// Vixie cron), on both passes when it has a `*` or a step.
import { describe, expect, it } from 'vitest';
import { CronWindows, CycleScheduler } from '../../../src/daemon/scheduler.js';
import { FakeClock } from '../../helpers/daemon-clock.js';

const MINUTE = 60_000;

/** The minutes (UTC) in which a window opens in (from, to], asked minute by minute. */
function opened(expression: string, zone: string, from: string, to: string): string[] {
  const w = new CronWindows([expression], zone);
  const out: string[] = [];
  for (let t = Date.parse(from) + MINUTE; t <= Date.parse(to); t += MINUTE)
    if (w.opensBetween(t - MINUTE, t)) out.push(new Date(t).toISOString().slice(0, 16));
  return out;
}

describe('spring forward: a window in the skipped hour opens when the gap ends', () => {
  // Europe/Berlin, 29 March 2026: 02:00 CET is 03:00 CEST (01:00 UTC).
  const night = ['2026-03-28T22:00:00Z', '2026-03-29T04:00:00Z'] as const;

  it('a fixed time opens once, at 03:00', () => {
    expect(opened('30 2 * * *', 'Europe/Berlin', ...night)).toEqual(['2026-03-29T01:00']);
  });

  it('times with a step open once at 03:00 instead of not at all that night', () => {
    expect(opened('0-59/20 2 * * *', 'Europe/Berlin', ...night)).toEqual(['2026-03-29T01:00']);
    expect(opened('*/15 2 * * 0', 'America/New_York', '2026-03-08T05:00:00Z', '2026-03-08T09:00:00Z')).toEqual(['2026-03-08T07:00']);
  });

  it('a list opens its skipped time at 03:00 too', () => {
    expect(opened('15 1,2 * * *', 'Europe/Berlin', ...night)).toEqual(['2026-03-29T00:15', '2026-03-29T01:00']);
  });

  it('an hourly cadence just goes on: no extra window', () => {
    const hourly = opened('0 * * * *', 'Europe/Berlin', ...night);
    expect(hourly).toEqual([
      '2026-03-28T23:00',
      '2026-03-29T00:00',
      '2026-03-29T01:00',
      '2026-03-29T02:00',
      '2026-03-29T03:00',
      '2026-03-29T04:00',
    ]);
  });

  it('through the scheduler: the window opens once, at the end of the gap', async () => {
    const clock = new FakeClock(Date.parse('2026-03-29T00:59:50Z'));
    const runs: number[] = [];
    const windows = new CronWindows(['0-59/20 2 * * *'], 'Europe/Berlin');
    const s = new CycleScheduler({
      pollMs: 30_000,
      windows,
      cycle: async () => (runs.push(clock.now()), true),
      now: clock.now,
      timers: clock,
    });
    s.start();
    await clock.advance(2 * 3_600_000);
    expect(runs.map((t) => new Date(Math.floor(t / 1000) * 1000).toISOString())).toEqual(['2026-03-29T01:00:00.000Z']);
    s.stop();
    await windows.close();
  });
});

describe('fall back: a fixed time in the repeated hour opens once, a cadence on both passes', () => {
  // Europe/Berlin, 25 October 2026: 02:00–02:59 twice, CEST (00:00–00:59 UTC) then CET (01:00–01:59 UTC).
  const night = ['2026-10-24T22:00:00Z', '2026-10-25T04:00:00Z'] as const;

  it('a fixed time opens at its first pass only', () => {
    expect(opened('30 2 * * *', 'Europe/Berlin', ...night)).toEqual(['2026-10-25T00:30']);
    expect(opened('30 1 * * *', 'America/New_York', '2026-11-01T04:00:00Z', '2026-11-01T09:00:00Z')).toEqual(['2026-11-01T05:30']);
  });

  it('a list or a range is fixed times too: once each', () => {
    expect(opened('15 1,2 * * *', 'Europe/Berlin', ...night)).toEqual(['2026-10-24T23:15', '2026-10-25T00:15']);
    expect(opened('0,30 1 * * *', 'America/New_York', '2026-11-01T04:00:00Z', '2026-11-01T09:00:00Z')).toEqual([
      '2026-11-01T05:00',
      '2026-11-01T05:30',
    ]);
  });

  it('a step opens on both passes', () => {
    expect(opened('*/30 2 * * *', 'Europe/Berlin', ...night)).toEqual([
      '2026-10-25T00:00',
      '2026-10-25T00:30',
      '2026-10-25T01:00',
      '2026-10-25T01:30',
    ]);
  });
});

describe('a change at midnight (America/Santiago) keeps windows on their day', () => {
  it('spring: Sunday 00:00 does not exist; its window opens at 01:00 that Sunday', () => {
    const night = ['2026-09-05T23:00:00Z', '2026-09-06T08:00:00Z'] as const;
    expect(opened('0 0 * * 0', 'America/Santiago', ...night)).toEqual(['2026-09-06T04:00']);
    // A window across midnight: Saturday's two, then Sunday's 00:00 and 00:30 together at 01:00.
    expect(opened('*/30 23,0 * * *', 'America/Santiago', ...night)).toEqual(['2026-09-06T03:00', '2026-09-06T03:30', '2026-09-06T04:00']);
  });

  it('fall back: Saturday 23:30 comes twice and opens once; Sunday 00:00 once', () => {
    const night = ['2026-04-04T23:00:00Z', '2026-04-05T08:00:00Z'] as const;
    expect(opened('30 23 * * 6', 'America/Santiago', ...night)).toEqual(['2026-04-05T02:30']);
    expect(opened('0 0 * * 0', 'America/Santiago', ...night)).toEqual(['2026-04-05T04:00']);
  });
});
