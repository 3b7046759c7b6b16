/**
 * Retention of the rows that ended in failure: inbound `failed` and outbound `in_error`. Age alone
 * does not let them go, as it does finished rows: each still guards something outside the journal
 * for as long as that thing exists. A failed parcel's row keeps the parcel, still pending on the
 * service, from being downloaded again (src/journal/inbound-failed.ts); an in_error row is what
 * `gridsync requeue` works on while its file is in errorDir (`OutboundJournal.pruneInError`). So
 * each goes once it is older than `retention.journalDays` and what it guards is gone: the parcel
 * no longer listed, the file no longer in errorDir. Their number is then bounded by what the
 * service keeps pending and by what errorDir holds (`errorRetentionDays` bounds that), not by time.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { MailboxTransport } from '../api/index.js';
import { errorFields } from '../errors/index.js';
import { pendingIds } from '../inbound/index.js';
import { OutboundJournal, pruneFailedParcels } from '../journal/index.js';
import type { DaemonRuntime, MailboxRuntime } from './runtime.js';

/** What retention asks the service: a mailbox's pending list. */
export type PendingLister = Pick<MailboxTransport, 'pendingInbox'>;

/**
 * Old failed rows of the configured mailboxes whose parcel the service no longer lists. A mailbox
 * is listed only when it has such rows. Rows of a mailbox the config no longer names stay: no
 * list of it is read, and no new ones are added.
 */
export async function pruneFailedInbound(rt: DaemonRuntime, service: PendingLister, olderThanMs: number): Promise<number> {
  let pruned = 0;
  for (const m of rt.mailboxes) {
    if (!m.inbound) continue;
    try {
      pruned += await pruneFailedParcels(rt.journal, m.mailboxId, olderThanMs, () => pendingNow(rt, service, m));
    } catch (err) {
      // Stopping: the list call was aborted, not refused.
      if (rt.signal.aborted) break;
      rt.logger.warn({ ...errorFields(err), mailbox: m.name }, 'retention: failed parcels kept until the next pass');
    }
  }
  return pruned;
}

/** Old in_error rows whose file has left errorDir. */
export function pruneInErrorOutbound(rt: DaemonRuntime, olderThanMs: number): Promise<number> {
  return new OutboundJournal(rt.journal).pruneInError(olderThanMs, errorFileGone);
}

/** The parcel ids the mailbox's pending list shows now, or undefined when it cannot say which parcels are not pending (src/inbound/pending-ids.ts). */
async function pendingNow(rt: DaemonRuntime, service: PendingLister, m: MailboxRuntime): Promise<ReadonlySet<number> | undefined> {
  const { ids, incomplete } = pendingIds(await service.pendingInbox(m.mailboxId, { signal: rt.signal }));
  if (incomplete === undefined) return ids;
  rt.logger.info({ mailbox: m.name, reason: incomplete }, 'retention: failed parcels kept: the pending list cannot show which are gone');
  return undefined;
}

/**
 * Whether a file has left errorDir (an in_error row's, or the one a report stands beside): no path
 * (nothing reached errorDir: the file vanished, or a FIFO was removed), or nothing at it — a link
 * counts as something — in a folder that is there. A missing folder says nothing (a share not
 * mounted, a folder moved aside): its rows and reports stay.
 */
export async function errorFileGone(finalPath: string | null): Promise<boolean> {
  if (finalPath === null) return true;
  try {
    await fs.promises.lstat(finalPath);
    return false;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') return false;
  }
  try {
    return (await fs.promises.stat(path.dirname(finalPath))).isDirectory();
  } catch {
    return false;
  }
}
