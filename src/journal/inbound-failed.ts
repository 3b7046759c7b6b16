/**
 * Retention of inbound `failed` rows. Such a row is what keeps its parcel from being fetched
 * again: a failed parcel is never confirmed, so it stays pending on the service, and the listing
 * journals only parcels it holds no row for (src/inbound/listing.ts). Deleted while the service
 * still lists the parcel, the row would let the next cycle download it anew — `maxAttempts` more
 * attempts of a file that failed them all, once per retention period — and, were a parcel that
 * failed after it was placed (its confirm answered 404) ever listed again, place a second copy.
 *
 * So a failed row goes only when it is older than the retention period and the mailbox's pending
 * list, read now and complete, does not show its parcel: a parcel the service has dropped (past
 * its `InBoxTimeout`, or deleted) comes back only if the service brings it back, and is then new
 * work like any parcel reset on the service. No separate tombstone is kept: the row itself is
 * one, for as long as the service lists its parcel.
 */
import { pruneJudged, type JournalStore } from './store.js';

const FAILED_BEFORE = "mailbox_id = ? AND state = 'failed' AND updated_at < ?";

/**
 * Deletes the mailbox's failed rows older than `olderThanMs` whose parcel `pendingNow` does not
 * show. `pendingNow` is asked only when there is such a row (one list call then, none on most
 * days): the ids of a complete pending list, or undefined when it cannot tell (a list cut short,
 * a record without an id) — then every row stays.
 */
export async function pruneFailedParcels(
  store: Pick<JournalStore, 'all' | 'get' | 'maintain' | 'now'>,
  mailboxId: number,
  olderThanMs: number,
  pendingNow: () => Promise<ReadonlySet<number> | undefined>,
): Promise<number> {
  const params = [mailboxId, store.now() - olderThanMs];
  if (!(await store.get(`SELECT 1 AS one FROM inbound_parcels WHERE ${FAILED_BEFORE} LIMIT 1`, ...params))) return 0;
  // Read after the candidates' age was fixed: a row that failed since is younger and not judged.
  const pending = await pendingNow();
  if (!pending) return 0;
  return pruneJudged<{ parcel_id: number }>(
    store,
    'inbound_parcels',
    'parcel_id',
    FAILED_BEFORE,
    params,
    (row) => !pending.has(row.parcel_id),
  );
}
