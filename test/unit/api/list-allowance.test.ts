import { describe, expect, it } from 'vitest';
import { listLimits } from '../../../src/api/list-allowance.js';
import { DEFAULTS } from '../../../src/config/defaults.js';

const limits = { ...DEFAULTS.api.limits, maxListEntries: 100 };

describe('the room a list keeps for parcels given up on', () => {
  it('keeps that many records more than the limit', () => {
    expect(listLimits(limits, 7).maxListEntries).toBe(107);
    expect(listLimits(limits, 7).maxBodyBytes).toBe(limits.maxBodyBytes);
  });
  it('never more than the limit once again, whatever the journal holds', () => {
    expect(listLimits(limits, 1e9).maxListEntries).toBe(200);
  });
  it('nothing given up on, or nonsense: the limit as configured', () => {
    for (const n of [undefined, 0, -5, Number.NaN]) expect(listLimits(limits, n).maxListEntries).toBe(100);
  });
});
