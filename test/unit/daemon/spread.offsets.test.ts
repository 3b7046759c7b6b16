// pollOffsets: where each mailbox's poll falls in a scheduled cycle — evenly over the first part
// of the interval, never past it, the first at once.
import { describe, expect, it } from 'vitest';
import { pollOffsets, SPREAD_SHARE } from '../../../src/daemon/spread.js';

describe('pollOffsets', () => {
  it('one mailbox polls at once; none gives no offsets', () => {
    expect(pollOffsets(1, 30_000)).toEqual([0]);
    expect(pollOffsets(0, 30_000)).toEqual([]);
  });

  it('spreads many mailboxes evenly over the spread window, in order, inside it', () => {
    const poll = 30_000;
    const offsets = pollOffsets(500, poll);
    expect(offsets).toHaveLength(500);
    expect(offsets[0]).toBe(0);
    const window = poll * SPREAD_SHARE;
    expect(offsets.every((o) => o >= 0 && o < window)).toBe(true);
    const gaps = offsets.slice(1).map((o, i) => o - (offsets[i] as number));
    // Even: every gap is the window divided by the count, give or take the rounding to whole ms.
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(Math.floor(window / 500));
    expect(Math.max(...gaps)).toBeLessThanOrEqual(Math.ceil(window / 500));
  });

  it('a handful of mailboxes are as far apart as the window allows', () => {
    expect(pollOffsets(4, 8000)).toEqual([0, 1000, 2000, 3000]);
  });
});
