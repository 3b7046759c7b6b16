// After a 429 every request of the client waits out the pause — and no longer: a wall clock set back
// an hour during the pause (NTP correcting a clock that ran fast) held every request of the client
// for the hour, since the pause's end was a reading of that clock.
import { describe, expect, it } from 'vitest';
import { RateGate } from '../../../src/api/rate-gate.js';

function gateWithClock() {
  let now = 1_000_000;
  const slept: number[] = [];
  const gate = new RateGate(
    () => now,
    async (ms) => {
      slept.push(ms);
      now += ms;
    },
  );
  return { gate, slept, step: (ms: number) => (now += ms) };
}

describe('RateGate', () => {
  it('holds requests for the pause, then lets them through', async () => {
    const { gate, slept } = gateWithClock();
    gate.pause(2000);
    await gate.pass();
    await gate.pass();
    expect(slept).toEqual([2000]);
    expect(gate.pauses).toBe(1);
  });

  it('waits no longer than the pause when the wall clock is set back during it', async () => {
    const { gate, slept, step } = gateWithClock();
    gate.pause(2000);
    step(-3_600_000);
    await gate.pass();
    await gate.pass();
    expect(slept).toEqual([2000]);
  });
});
