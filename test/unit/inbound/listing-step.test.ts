// The listing's decision for one listed parcel, from its journal row and the latest `gridsync
// redeliver` request for it on the trail (both read for the whole list at once).
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { INBOUND_STATES, type InboundState } from '../../../src/journal/index.js';
import { listingStep, turnsOnRequest } from '../../../src/inbound/listing-step.js';

const row = (state: InboundState, updated_at = 5_000) => ({ state, updated_at });

describe('the listing step of a listed parcel', () => {
  it('a parcel the journal does not know is recorded, whatever the trail says', () => {
    expect(listingStep(undefined, undefined)).toEqual({ kind: 'record' });
    expect(listingStep(undefined, 9_000)).toEqual({ kind: 'record' });
  });

  it('a confirmed parcel listed again is judged by its status on the service, requested or not', () => {
    const confirmed = row('confirmed');
    expect(listingStep(confirmed, undefined)).toEqual({ kind: 'judge', row: confirmed, requested: false });
    expect(listingStep(confirmed, 4_999)).toEqual({ kind: 'judge', row: confirmed, requested: false });
    expect(listingStep(confirmed, 5_000)).toEqual({ kind: 'judge', row: confirmed, requested: true });
    expect(listingStep(confirmed, 6_000)).toEqual({ kind: 'judge', row: confirmed, requested: true });
  });

  it('a failed parcel is tried anew only when asked for since its row last changed (the same millisecond counts)', () => {
    const failed = row('failed');
    expect(listingStep(failed, undefined)).toEqual({ kind: 'none' });
    expect(listingStep(failed, 4_999)).toEqual({ kind: 'none' });
    expect(listingStep(failed, 5_000)).toEqual({ kind: 'retry', row: failed });
    expect(listingStep(failed, 6_000)).toEqual({ kind: 'retry', row: failed });
  });

  it('a parcel taken elsewhere and listed again is delivered, asked for or not', () => {
    const taken = row('taken');
    expect(listingStep(taken, undefined)).toEqual({ kind: 'pending-again', row: taken });
    expect(listingStep(taken, 6_000)).toEqual({ kind: 'pending-again', row: taken });
  });

  it('a parcel the journal drives already is left to it, even when asked for', () => {
    for (const state of ['listed', 'downloading', 'staged', 'placed'] as const) {
      expect(listingStep(row(state), undefined)).toEqual({ kind: 'none' });
      expect(listingStep(row(state), 6_000)).toEqual({ kind: 'none' });
    }
  });

  it('requests are read for exactly the rows whose step can turn on one', () => {
    for (const state of INBOUND_STATES) {
      const turns = !isDeepStrictEqual(listingStep(row(state), 6_000), listingStep(row(state), undefined));
      expect(turnsOnRequest(row(state)), state).toBe(turns);
    }
    expect(INBOUND_STATES.filter((state) => turnsOnRequest(row(state)))).toEqual(['confirmed', 'failed']);
  });
});
