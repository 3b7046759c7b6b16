// Readiness by stability: a file that has not changed for stableMs when first seen (it sat in the
// outbox while gridsync was down, or between two nightly runs) is ready at once; a fresh or a
// changing file still waits stableMs from when this exact size and mtime were first seen.
import { describe, expect, it } from 'vitest';
import { StabilityTracker } from '../../../src/outbound/index.js';

const STABLE = 60_000;

describe('StabilityTracker', () => {
  it('a file unchanged for longer than stableMs at its first observation is ready at once', () => {
    const t = new StabilityTracker(STABLE);
    expect(t.observe('old.x12', { size: 10, mtimeMs: 1, unchangedForMs: 10 * STABLE }, 1_000)).toBe(0);
    expect(t.observe('exact.x12', { size: 10, mtimeMs: 1, unchangedForMs: STABLE }, 1_000)).toBe(0);
  });

  it('a fresh file waits stableMs from its first observation, then is ready', () => {
    const t = new StabilityTracker(STABLE);
    expect(t.observe('new.x12', { size: 10, mtimeMs: 5, unchangedForMs: 200 }, 1_000)).toBe(STABLE);
    expect(t.observe('new.x12', { size: 10, mtimeMs: 5, unchangedForMs: 20_200 }, 21_000)).toBe(STABLE - 20_000);
    expect(t.observe('new.x12', { size: 10, mtimeMs: 5, unchangedForMs: 60_200 }, 61_000)).toBe(0);
  });

  it('a file that changes after its first observation starts its wait again, however old its times look', () => {
    const t = new StabilityTracker(STABLE);
    expect(t.observe('grow.x12', { size: 10, mtimeMs: 5, unchangedForMs: 100 }, 1_000)).toBe(STABLE);
    // Grown, with its mtime set back (cp -p): only a first sighting may count the file's own age.
    expect(t.observe('grow.x12', { size: 20, mtimeMs: 4, unchangedForMs: 10 * STABLE }, 2_000)).toBe(STABLE);
  });

  it('stableMs 0: every file is ready at once', () => {
    expect(new StabilityTracker(0).observe('a', { size: 1, mtimeMs: 1, unchangedForMs: 0 }, 0)).toBe(0);
  });
});
