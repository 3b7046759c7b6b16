/**
 * The listing step of an inbound cycle: the pending list read, new parcels journalled as `listed`,
 * confirmed ones listed again judged (redelivery), failed ones an operator asked for again retried,
 * unreadable entries reported, the waiting told.
 * The list is a hint of new work, never the truth: the pipeline drives what the journal holds.
 */
import type { PendingInbox, UnreadableParcel } from '../api/index.js';
import type { Confirmations } from './confirmations.js';
import { listingStep, turnsOnRequest } from './listing-step.js';
import { pendingIds, type PendingIds } from './pending-ids.js';
import type { InboundContext, InboundCycleResult } from './types.js';
import { oldestWaitingSeconds } from './waiting.js';

export class InboxListing {
  /**
   * Listed parcels gridsync cannot act on (an id above 2^53, no id), from the last listing, keyed
   * by the id as it arrived: reported in the log once and in `once`'s summary, never skipped silently.
   */
  readonly unreadable = new Map<string, { fileName?: string; reason: string; code: string }>();

  constructor(
    private readonly ctx: InboundContext,
    private readonly confirmations: Confirmations,
  ) {}

  /** Reads the pending list and journals what is new; counts into `result`. Returns which parcels the list shows. */
  async list(result: InboundCycleResult, signal: AbortSignal | undefined): Promise<PendingIds> {
    const { ctx } = this;
    // The parcels given up on stay listed, oldest first: the list keeps room for them beyond the
    // limit, or as many of them at its head would hide every newer parcel for good.
    const givenUp = await ctx.journal.failedCount(ctx.mailboxId);
    const pending = await ctx.client.pendingInbox(ctx.mailboxId, { givenUp, ...(signal ? { signal } : {}) });
    this.noteUnreadable(pending.unreadable);
    ctx.tally(result, 'unreadable', pending.unreadable.length);
    await this.confirmations.noteListing(pending);
    const listings: Promise<boolean>[] = [];
    // Parcels we delivered may linger in the list for a while: only the others can expire unseen.
    const waiting: (string | undefined)[] = [];
    const listingBytes: number[] = [];
    // The rows, and the operator's requests for those that may act on one, each read for the whole
    // list at once: on PostgreSQL a read per parcel was a round trip per parcel, every cycle — and
    // a partner's bad files can leave hundreds failed and listed for days.
    const known = await ctx.journal.getMany(
      ctx.mailboxId,
      pending.parcels.map((p) => p.parcelId),
    );
    const requests = await ctx.journal.lastRedeliveryRequests([...known.values()].filter(turnsOnRequest).map((r) => r.parcel_id));
    for (const p of pending.parcels) {
      const row = known.get(p.parcelId);
      if (row?.state !== 'confirmed') waiting.push(p.created);
      const step = listingStep(row, requests.get(p.parcelId));
      if (step.kind === 'record') {
        const listing = ctx.journal.recordListed(ctx.mailboxId, {
          parcelId: p.parcelId,
          fileName: p.fileName,
          ...(p.bytes !== undefined ? { bytes: p.bytes } : {}),
          ...(p.gridIdFrom !== undefined ? { gridIdFrom: p.gridIdFrom } : {}),
          ...(p.gridIdTo !== undefined ? { gridIdTo: p.gridIdTo } : {}),
          ...(p.created !== undefined ? { created: p.created } : {}),
        });
        // Awaited below with the others; a refusal (a lease lost) meanwhile must not go unhandled.
        listing.catch(() => undefined);
        listings.push(listing);
        listingBytes.push(p.bytes ?? 0);
      } else if (step.kind === 'judge') {
        if (await this.confirmations.isRedelivery(step.row, step.requested, signal)) ctx.tally(result, 'redelivered');
      } else if (step.kind === 'retry') {
        // Given up on after maxAttempts, and asked for again by an operator once the cause was
        // fixed (`gridsync redeliver`): tried anew from the download, its attempts counted afresh.
        const { row } = step;
        const delivery = await ctx.journal.markRedelivery(ctx.mailboxId, row.parcel_id);
        ctx.logger.info({ parcelId: row.parcel_id, delivery, lastError: row.last_error }, 'failed parcel asked for again: trying it anew');
        ctx.tally(result, 'redelivered');
      } else if (step.kind === 'pending-again') {
        await ctx.journal.markPendingAgain(ctx.mailboxId, step.row.parcel_id);
        ctx.logger.info({ parcelId: step.row.parcel_id }, 'parcel taken elsewhere is pending again: delivering it');
      }
    }
    const listed = await Promise.all(listings);
    if (pending.omitted > 0) this.warnCut(pending, givenUp);
    ctx.tally(result, 'listed', listed.filter(Boolean).length, {
      bytes: listed.reduce((n, isNew, i) => n + (isNew ? (listingBytes[i] ?? 0) : 0), 0),
    });
    ctx.events.emit('inbound:waiting', {
      mailbox: ctx.mailbox,
      count: waiting.length,
      oldestAgeSeconds: oldestWaitingSeconds(waiting, ctx.now() + (ctx.client.serviceClockOffsetMs?.() ?? 0)),
    });
    return pendingIds(pending);
  }

  /** The list was cut: the rest comes in later cycles — unless parcels given up on fill what was kept. */
  private warnCut(pending: PendingInbox, givenUp: number): void {
    const fields = { taken: pending.parcels.length, omitted: pending.omitted, givenUp };
    if (givenUp < pending.parcels.length)
      this.ctx.logger.warn(fields, 'the pending list is longer than api.limits.maxListEntries; the rest is taken in later cycles');
    else
      this.ctx.logger.error(
        fields,
        'the pending list is cut and parcels given up on may fill what is kept: newer parcels may not be seen; fix the cause and `gridsync redeliver` them, or raise api.limits.maxListEntries',
      );
  }

  private noteUnreadable(records: readonly UnreadableParcel[]): void {
    const before = new Set(this.unreadable.keys());
    this.unreadable.clear();
    records.forEach((r, i) => {
      const key = r.roughId ?? `#${i}`;
      this.unreadable.set(key, {
        ...(r.fileName !== undefined ? { fileName: r.fileName } : {}),
        reason: r.error.message,
        code: r.error.code,
      });
      this.ctx.events.emit('inbound:skipped', {
        mailbox: this.ctx.mailbox,
        count: 1,
        reason: r.error.message,
        code: r.error.code,
      });
      if (!before.has(key)) {
        this.ctx.logger.error(
          { code: r.error.code, parcelId: r.roughId, fileName: r.fileName, err: r.error.message },
          'listed parcel cannot be acted on; it stays on the service',
        );
      }
    });
  }
}
