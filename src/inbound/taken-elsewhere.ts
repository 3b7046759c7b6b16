/**
 * A row whose download has not begun (`listed`, or `downloading` from an older journal) and whose
 * parcel a complete pending list no longer shows. Work begun (`staged`, `placed`) goes on by
 * parcel id whatever the list shows: that is crash recovery (docs/architecture.md). But a parcel
 * someone else took off the list while our row sat `listed` — another client or the service's web
 * UI confirmed it, or an older journal backup was restored after we had delivered it — was
 * downloaded again by id and placed a second time. Off the list is no proof, though: on a service
 * that hides a parcel once downloaded, our own failed download hides it too, and such a service
 * need not offer it again. So the service is asked (one lookup per such row, rare): a confirmed
 * parcel ends the row `taken`, told once with the parcel id (`gridsync status` counts it); one
 * still ready, or in a state a download of ours may have left, is downloaded by id as before. A
 * list cut short or with an unreadable record leaves such rows for a cycle whose list can tell. A
 * taken parcel listed again is delivered (./listing-step.ts).
 */
import fs from 'node:fs';
import { CONFIRMED_STATUS } from '../api/index.js';
import { errorFields } from '../errors/index.js';
import type { InboundRow } from '../journal/index.js';
import { ParcelTakenElsewhereError } from './errors.js';
import type { PendingIds } from './pending-ids.js';
import type { InboundContext } from './types.js';

/** A row in this state has not begun its download here: what a complete pending list decides on. */
export const undownloaded = (state: string): boolean => state === 'listed' || state === 'downloading';

/** Lookups of parcels off the list at once: after a restored backup they can be many. */
const LOOKUPS_AT_ONCE = 8;

/**
 * What the service's status of a parcel off a complete pending list makes of our row, whose
 * download has not begun: `InBoxArchived` proves a confirm (taken); `InBoxTransferred` follows a
 * confirm or a download, by the service's documentation (ours, if we tried to download it:
 * downloaded again; else someone else's: taken); anything else — still ready, hidden by a
 * download, a status we do not know — is downloaded by id as before: a second copy is better than
 * none. No status at all is one we do not know.
 */
export function offListVerdict(status: string | undefined, triedHere: boolean): 'taken' | 'download' {
  if (status === CONFIRMED_STATUS) return 'taken';
  if (status === 'InBoxTransferred') return triedHere ? 'download' : 'taken';
  return 'download';
}

export class TakenElsewhere {
  constructor(
    private readonly ctx: InboundContext,
    /** Where an earlier attempt's download of the parcel may lie (a crash after it, before `staged`). */
    private readonly stagingPath: (parcelId: number) => string,
  ) {}

  /** The rows of `rows` the cycle may drive now; those taken elsewhere are journalled so. */
  async drivable(rows: readonly InboundRow[], pending: PendingIds, signal?: AbortSignal): Promise<InboundRow[]> {
    const drive: InboundRow[] = [];
    const offList: InboundRow[] = [];
    for (const row of rows) {
      if (!undownloaded(row.state) || pending.ids.has(row.parcel_id)) drive.push(row);
      else if (pending.incomplete === undefined) offList.push(row);
    }
    for (let i = 0; i < offList.length; i += LOOKUPS_AT_ONCE) {
      // The taken ones' commits run together and share transactions.
      const verdicts = await Promise.all(offList.slice(i, i + LOOKUPS_AT_ONCE).map((row) => this.judge(row, signal)));
      for (const row of verdicts) if (row) drive.push(row);
    }
    return drive;
  }

  /** The row when it is to be downloaded; undefined once journalled taken. */
  private async judge(row: InboundRow, signal?: AbortSignal): Promise<InboundRow | undefined> {
    let status: string | undefined;
    try {
      status = (await this.ctx.client.parcel(row.parcel_id, { signal })).status;
    } catch (err) {
      // Not known: downloaded by id as before (that call reports what is wrong).
      this.ctx.logger.debug(
        { ...errorFields(err), parcelId: row.parcel_id },
        'lookup of a parcel off the pending list failed; downloading it by id',
      );
      return row;
    }
    if (offListVerdict(status, row.attempts > 0) === 'download') return row;
    await this.taken(row, status);
    return undefined;
  }

  private async taken(row: InboundRow, status: string | undefined): Promise<void> {
    const err = new ParcelTakenElsewhereError(row.parcel_id);
    await this.ctx.journal.markTaken(this.ctx.mailboxId, row.parcel_id, err.message);
    await fs.promises.rm(this.stagingPath(row.parcel_id), { force: true });
    this.ctx.logger.warn(
      { ...errorFields(err), fileName: row.file_name, status, attempts: row.attempts, lastError: row.last_error },
      'parcel taken elsewhere: no longer pending on the service before its download here began; not downloaded here (delivered if listed again)',
    );
  }
}
