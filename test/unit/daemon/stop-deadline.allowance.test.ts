// The stop's one deadline: transfers get shutdownTimeout, every release after it a share of one
// fixed grace, and nothing is waited for past the grace however many releases hang.
import { describe, expect, it } from 'vitest';
import { Cleanups } from '../../../src/daemon/cleanups.js';
import { allowanceMs, CLEANUP_GRACE_MS, STOP_GRACE_MS, StopDeadline } from '../../../src/daemon/stop-deadline.js';
import { silentLogger } from '../../../src/log.js';

describe('allowanceMs', () => {
  const d = { transfersAt: 10_000, endAt: 10_000 + STOP_GRACE_MS };
  it('before the transfers’ deadline: what is left of it', () => {
    expect(allowanceMs(4_000, d, CLEANUP_GRACE_MS)).toBe(6_000);
  });
  it('at or past it: the release’s share of the grace, never past the grace', () => {
    expect(allowanceMs(9_500, d, CLEANUP_GRACE_MS)).toBe(CLEANUP_GRACE_MS);
    expect(allowanceMs(10_000, d, CLEANUP_GRACE_MS)).toBe(CLEANUP_GRACE_MS);
    expect(allowanceMs(11_500, d, CLEANUP_GRACE_MS)).toBe(500);
    expect(allowanceMs(12_500, d, CLEANUP_GRACE_MS)).toBeLessThanOrEqual(0);
  });
});

describe('StopDeadline', () => {
  it('counts on the clock it is given', () => {
    let now = 100;
    const deadline = new StopDeadline(3_000, () => now);
    expect(deadline.transfersLeftMs()).toBe(3_000);
    expect(deadline.leftMs()).toBe(3_000 + STOP_GRACE_MS);
    now += 3_500;
    expect(deadline.transfersLeftMs()).toBe(0);
    expect(deadline.allowanceMs()).toBe(CLEANUP_GRACE_MS);
    expect(deadline.leftMs()).toBe(STOP_GRACE_MS - 500);
    now += STOP_GRACE_MS;
    expect(deadline.allowanceMs()).toBe(0);
    expect(deadline.leftMs()).toBe(0);
  });
});

describe('Cleanups.runAll', () => {
  it('releases that all hang take the deadline and the grace once, not a grace each', async () => {
    const cleanups = new Cleanups();
    const ran: string[] = [];
    for (const name of ['journal', 'service', 'outbound', 'retention', 'http'])
      cleanups.push({ name, fn: () => (ran.push(name), new Promise<void>(() => undefined)) });
    const started = performance.now();
    await cleanups.runAll(new StopDeadline(100), silentLogger);
    const took = performance.now() - started;
    expect(cleanups.forced).toBe(true);
    // 1 s each for the first two (their share of the grace), the rest of it for those after. How
    // many more start is not asserted: Node reckons a timer from the event loop's cached clock, so
    // on a busy machine a timer can fire a little before its time by performance.now(), and the
    // next release then starts with the few milliseconds left (a CI run saw all five start). What
    // holds whatever the timers do: nothing is waited for past the grace.
    expect(ran.slice(0, 2)).toEqual(['http', 'retention']);
    expect(took).toBeGreaterThanOrEqual(100 + STOP_GRACE_MS - 50);
    expect(took).toBeLessThan(100 + STOP_GRACE_MS + 1_000);
  });

  it('every release runs when they end in time, even after one that fails', async () => {
    const cleanups = new Cleanups();
    const ran: string[] = [];
    cleanups.push({ name: 'a', fn: () => void ran.push('a') });
    cleanups.push({
      name: 'b',
      fn: () => {
        ran.push('b');
        throw new Error('b failed');
      },
    });
    await cleanups.runAll(new StopDeadline(1_000), silentLogger);
    expect(ran).toEqual(['b', 'a']);
    expect(cleanups.forced).toBe(false);
  });
});
