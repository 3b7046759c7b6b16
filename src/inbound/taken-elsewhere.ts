/**
 * A row whose download has not begun (`listed`, or `downloading` from an older journal) is driven
 * only while the cycle's pending list shows its parcel. Work begun (`staged`, `placed`) goes on by
 * parcel id whatever the list shows: that is crash recovery (docs/architecture.md). But a parcel
 * someone else took off the list while our row sat `listed` — another client or the service's web
 * UI confirmed it, or an older journal backup was restored after we had delivered it — was
 * downloaded again by id and placed a second time. So a complete list that no longer shows such a
 * row ends it `taken`, told once with the parcel id (`gridsync status` counts it); a list cut
 * short or with an unreadable record leaves it for a cycle whose list can tell. A taken parcel
 * listed again is delivered (./listing-step.ts).
 */
import fs from 'node:fs';
import { errorFields } from '../errors/index.js';
import type { InboundRow } from '../journal/index.js';
import { ParcelTakenElsewhereError } from './errors.js';
import type { PendingIds } from './pending-ids.js';
import type { InboundContext } from './types.js';

const undownloaded = (row: InboundRow): boolean => row.state === 'listed' || row.state === 'downloading';

export class TakenElsewhere {
  constructor(
    private readonly ctx: InboundContext,
    /** Where an earlier attempt's download of the parcel may lie (a crash after it, before `staged`). */
    private readonly stagingPath: (parcelId: number) => string,
  ) {}

  /** The rows of `rows` the cycle may drive now; those taken elsewhere are journalled so. */
  async drivable(rows: readonly InboundRow[], pending: PendingIds): Promise<InboundRow[]> {
    const drive: InboundRow[] = [];
    const taken: InboundRow[] = [];
    for (const row of rows) {
      if (!undownloaded(row) || pending.ids.has(row.parcel_id)) drive.push(row);
      else if (pending.incomplete === undefined) taken.push(row);
    }
    // Together: after a restored backup they can be many, and their commits share transactions.
    await Promise.all(taken.map((row) => this.taken(row)));
    return drive;
  }

  private async taken(row: InboundRow): Promise<void> {
    const err = new ParcelTakenElsewhereError(row.parcel_id);
    await this.ctx.journal.markTaken(this.ctx.mailboxId, row.parcel_id, err.message);
    await fs.promises.rm(this.stagingPath(row.parcel_id), { force: true });
    this.ctx.logger.warn(
      { ...errorFields(err), fileName: row.file_name, attempts: row.attempts, lastError: row.last_error },
      'parcel taken elsewhere: no longer pending on the service before its download here began; not downloaded here (delivered if listed again)',
    );
  }
}
