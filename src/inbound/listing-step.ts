/**
 * What the listing does with one listed parcel, decided from what it read for the whole list at
 * once: the parcel's journal row, and when an operator last asked for the parcel again (`gridsync
 * redeliver`). Pure, so that each case is tested on its own; the reads and the acting are
 * `listing.ts`'s.
 */
import type { InboundRow } from '../journal/index.js';

type Judged = Pick<InboundRow, 'state' | 'updated_at'>;

export type ListingStep<R extends Judged> =
  /** Not in the journal: new work, journalled as `listed`. */
  | { readonly kind: 'record' }
  /**
   * Confirmed and listed again: a lagging list, a confirm that never took, or a reset on the
   * service — the service's status tells (`Confirmations.isRedelivery`); `requested` says whether
   * an operator asked for it, which decides only how a redelivery is logged.
   */
  | { readonly kind: 'judge'; readonly row: R; readonly requested: boolean }
  /** Given up on after `maxAttempts` and asked for again since: tried anew from the download. */
  | { readonly kind: 'retry'; readonly row: R }
  /** Taken elsewhere before its download here began (./taken-elsewhere.ts), and pending again: delivered. */
  | { readonly kind: 'pending-again'; readonly row: R }
  /** The journal drives it already, or it failed and nobody asked for it again. */
  | { readonly kind: 'none' };

/** Rows whose step may turn on an operator's request: the listing reads the requests of these only. */
export const turnsOnRequest = (row: Judged): boolean => row.state === 'confirmed' || row.state === 'failed';

/**
 * `lastRequestAt`: the moment of the parcel's latest `gridsync redeliver` on the trail, undefined
 * when there is none. A request older than the row's last change was made before that change (the
 * redelivery it caused, the failure that came after it) and is spent.
 */
export function listingStep<R extends Judged>(row: R | undefined, lastRequestAt: number | undefined): ListingStep<R> {
  if (!row) return { kind: 'record' };
  const requested = lastRequestAt !== undefined && lastRequestAt >= row.updated_at;
  if (row.state === 'confirmed') return { kind: 'judge', row, requested };
  if (row.state === 'failed' && requested) return { kind: 'retry', row };
  if (row.state === 'taken') return { kind: 'pending-again', row };
  return { kind: 'none' };
}
