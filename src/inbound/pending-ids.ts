/**
 * Which parcels a pending list shows, and whether it can say which it does not: a list cut at
 * `api.limits.maxListEntries` does not show the rest, and a record whose id cannot be read could
 * be any parcel. A record with an id above 2^53 is no parcel of ours: the journal never held one.
 */
import type { PendingInbox } from '../api/index.js';

export interface PendingIds {
  readonly ids: ReadonlySet<number>;
  /** Why the list cannot show which parcels are not pending; undefined when it is complete. */
  readonly incomplete?: string;
}

export function pendingIds(list: PendingInbox): PendingIds {
  const ids = new Set(list.parcels.map((p) => p.parcelId));
  let incomplete = list.omitted > 0 ? 'it is cut at api.limits.maxListEntries' : undefined;
  for (const u of list.unreadable) {
    const id = Number(u.roughId);
    if (Number.isSafeInteger(id)) ids.add(id);
    else if (!(Number.isInteger(id) && id > Number.MAX_SAFE_INTEGER)) incomplete ??= 'it holds a record without a readable id';
  }
  return incomplete === undefined ? { ids } : { ids, incomplete };
}
