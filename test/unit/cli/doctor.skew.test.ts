// doctor's clock-skew line: the sign always shown, whichever way a skew below 1 ms rounds (seen in
// a full run: -0.4 ms printed "database clock 0 ms", which the doctor test's pattern refused).
import { describe, expect, it } from 'vitest';
import { skewVerdict } from '../../../src/cli/doctor-journal.js';

describe('doctor: clock skew between this host and the database', () => {
  it.each([
    [-0.4, 'database clock +0 ms (round trip 3 ms)'],
    [0.4, 'database clock +0 ms (round trip 3 ms)'],
    [0, 'database clock +0 ms (round trip 3 ms)'],
    [12.6, 'database clock +13 ms (round trip 3 ms)'],
    [-12.6, 'database clock -13 ms (round trip 3 ms)'],
  ])('%s ms shows as a signed whole number', (skew, detail) => {
    expect(skewVerdict(skew, 3)).toEqual({ level: 'ok', detail });
  });

  it('a skew beyond the note threshold is a note that says what to run', () => {
    const v = skewVerdict(-60_000, 4);
    expect(v.level).toBe('note');
    expect(v.detail).toMatch(/^database clock -60000 ms \(round trip 4 ms\) from this host's: .*NTP\/chrony/);
  });
});
