// Freshness of /readyz on the monotonic clock: a daemon whose cycles stall still turns unready
// three poll intervals after its last success, whatever the wall clock does meanwhile.
import { describe, expect, it } from 'vitest';
import { HealthState } from '../../../src/daemon/readiness.js';

const state = { pollMs: 30_000, windows: false, stopping: false, scheduled: true, cycleFailures: 0, stuck: [], failing: [] };

describe('HealthState freshness', () => {
  it('ready after a success, unready once three poll intervals have passed on the monotonic clock', () => {
    let mono = 1000;
    const h = new HealthState(() => mono);
    expect(h.readiness(state).ready).toBe(false);
    h.succeeded(Date.UTC(2026, 10, 28, 12, 0, 0));
    mono += 90_000;
    expect(h.readiness(state)).toMatchObject({ ready: true, lastSuccessAt: '2026-11-28T12:00:00.000Z' });
    mono += 1;
    expect(h.readiness(state).ready).toBe(false);
    expect(h.readiness({ ...state, windows: true }).ready).toBe(true); // between windows nothing need be fresh
  });
});
