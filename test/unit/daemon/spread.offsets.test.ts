// pollOffsets: where each mailbox's poll falls in a scheduled cycle — evenly over the first part
// of the interval, never past it, the first at once.
import { describe, expect, it } from 'vitest';
import { pollOffsets, SPREAD_SHARE, SPREAD_STEP_MS } from '../../../src/daemon/spread.js';

describe('pollOffsets', () => {
  it('one mailbox polls at once; none gives no offsets', () => {
    expect(pollOffsets(1, 30_000)).toEqual([0]);
    expect(pollOffsets(0, 30_000)).toEqual([]);
  });

  it('spreads many mailboxes evenly over the spread window, in order, inside it, in batches a step apart', () => {
    const poll = 30_000;
    const offsets = pollOffsets(500, poll);
    expect(offsets).toHaveLength(500);
    expect(offsets[0]).toBe(0);
    const window = poll * SPREAD_SHARE;
    expect(offsets.every((o) => o >= 0 && o < window)).toBe(true);
    expect(offsets.every((o, i) => i === 0 || o >= (offsets[i - 1] as number))).toBe(true);
    const batches = new Map<number, number>();
    for (const o of offsets) batches.set(o, (batches.get(o) ?? 0) + 1);
    // As many batches as the window holds steps, evenly spaced, of sizes that differ by one at most.
    expect(batches.size).toBe(window / SPREAD_STEP_MS);
    const starts = [...batches.keys()];
    const gaps = starts.slice(1).map((o, i) => o - (starts[i] as number));
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(SPREAD_STEP_MS - 1);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(SPREAD_STEP_MS + 1);
    expect(Math.max(...batches.values()) - Math.min(...batches.values())).toBeLessThanOrEqual(1);
  });

  it('a handful of mailboxes are as far apart as the window allows', () => {
    expect(pollOffsets(4, 8000)).toEqual([0, 1000, 2000, 3000]);
  });
});
