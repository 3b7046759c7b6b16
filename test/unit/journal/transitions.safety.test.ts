/**
 * The journal's transition tables are the exactly-once rules in data form. These tests state the
 * rules from the outside — what must never happen — and check the tables (and the functions the
 * journal asks) against them.
 */
import { describe, expect, it } from 'vitest';
import { canTransition, INBOUND_STATES, INBOUND_TRANSITIONS, type InboundState } from '../../../src/journal/inbound.js';
import { canTransitionOutbound, OUTBOUND_STATES, OUTBOUND_TRANSITIONS, type OutboundState } from '../../../src/journal/outbound.js';

function reachable<S extends string>(table: Readonly<Record<S, readonly S[]>>, start: S): Set<S> {
  const seen = new Set<S>([start]);
  for (let grew = true; grew;) {
    grew = false;
    for (const [to, froms] of Object.entries(table) as [S, readonly S[]][]) {
      if (!seen.has(to) && froms.some((f) => seen.has(f))) {
        seen.add(to);
        grew = true;
      }
    }
  }
  return seen;
}

describe('inbound transitions', () => {
  it('a parcel is confirmed only after it was placed, and placed only from a verified staging file', () => {
    expect(INBOUND_TRANSITIONS.confirmed).toEqual(['placed']);
    expect(INBOUND_TRANSITIONS.placed).toEqual(['staged']);
    // staged is recorded once the download is verified and fsynced; it comes from a row still
    // waiting for its content (listed, or downloading in journals of older versions), never from
    // a row that already placed, confirmed or gave up.
    expect(INBOUND_TRANSITIONS.staged.every((s) => s === 'listed' || s === 'downloading' || s === 'staged')).toBe(true);
  });

  it('a placed parcel is never downloaded again (no second copy in the inbox)', () => {
    expect(canTransition('placed', 'downloading')).toBe(false);
    expect(canTransition('placed', 'listed')).toBe(false);
    expect(canTransition('placed', 'staged')).toBe(false);
  });

  it('a confirmed parcel only comes back through a redelivery (listed, delivery + 1)', () => {
    const fromConfirmed = INBOUND_STATES.filter((to) => canTransition('confirmed', to));
    expect(fromConfirmed).toEqual(['listed']);
  });

  it('every state is reachable from listed, and canTransition agrees with the table', () => {
    expect([...reachable(INBOUND_TRANSITIONS, 'listed')].sort()).toEqual([...INBOUND_STATES].sort());
    for (const from of INBOUND_STATES)
      for (const to of INBOUND_STATES) expect(canTransition(from, to)).toBe(INBOUND_TRANSITIONS[to].includes(from as InboundState));
  });
});

describe('outbound transitions', () => {
  it('a row starts in claiming and nothing leads back to it', () => {
    expect(OUTBOUND_TRANSITIONS.claiming).toEqual([]);
  });

  it('a file is archived only after the service accepted it, and accepted only from an attempt', () => {
    expect(OUTBOUND_TRANSITIONS.archived).toEqual(['uploaded']);
    expect(OUTBOUND_TRANSITIONS.uploaded).toEqual(['uploading']);
  });

  it('an accepted or archived file is never sent again', () => {
    for (const done of ['uploaded', 'archived'] as const) {
      expect(canTransitionOutbound(done, 'uploading')).toBe(false);
      expect(canTransitionOutbound(done, 'claimed')).toBe(false);
    }
  });

  it('a file reaches errorDir only through a decided reason, and leaves it only by requeue', () => {
    expect(OUTBOUND_TRANSITIONS.in_error).toEqual(['erroring']);
    expect(OUTBOUND_STATES.filter((to) => canTransitionOutbound('in_error', to))).toEqual(['requeued']);
    expect(OUTBOUND_TRANSITIONS.erroring).not.toContain('uploaded');
  });

  it('every state is reachable from claiming, and canTransitionOutbound agrees with the table', () => {
    expect([...reachable(OUTBOUND_TRANSITIONS, 'claiming')].sort()).toEqual([...OUTBOUND_STATES].sort());
    for (const from of OUTBOUND_STATES)
      for (const to of OUTBOUND_STATES)
        expect(canTransitionOutbound(from, to)).toBe(OUTBOUND_TRANSITIONS[to].includes(from as OutboundState));
  });
});
