/**
 * placed → confirmed, and what a confirmed parcel listed again means. A parcel whose placement is
 * recorded is never placed again on the strength of a confirm that did not take: only a parcel
 * seen to leave `InBoxReady` after its confirm and then seen ready again is a redelivery.
 */
import { CONFIRMED_STATUS, GridApiError, GridResponseError, type MailboxTransport, type PendingInbox } from '../api/index.js';
import { errorFields } from '../errors/index.js';
import { crashPoint, type InboundJournal, type InboundRow } from '../journal/index.js';
import type { Logger } from '../log.js';
import type { InboxConfig } from './types.js';

export interface ConfirmContext {
  readonly client: MailboxTransport;
  readonly journal: InboundJournal;
  readonly inbox: InboxConfig;
  readonly mailboxId: number;
  readonly logger: Logger;
}

export class Confirmations {
  /**
   * Parcels confirmed in the cycle under way (verifyConfirms). Which confirms nobody has seen take
   * yet — the parcel not seen to leave `InBoxReady` since (a listing without it, a lookup showing
   * another status) — the journal keeps, so that a restart does not forget it: listed ready
   * again, such a parcel is one whose confirm never took (an answer about another parcel, an
   * "ok" that changed nothing) and is confirmed again, never placed again. Only a parcel seen to
   * leave and come back is a redelivery (or one an operator had reset: `gridsync redeliver`).
   */
  private readonly confirmedNow = new Set<number>();

  constructor(private readonly ctx: ConfirmContext) {}

  /** A cycle's pending list: what it no longer shows was seen to leave; a new cycle's confirmations start. */
  async noteListing(pending: PendingInbox): Promise<void> {
    this.confirmedNow.clear();
    await this.seeLeft(pending, await this.ctx.journal.unverifiedConfirms(this.ctx.mailboxId));
  }

  /** After the cycle's parcels: one more listing when some were confirmed. */
  async afterCycle(signal?: AbortSignal): Promise<void> {
    if (this.confirmedNow.size > 0) await this.verifyConfirms(signal);
  }

  /**
   * placed → confirmed; an error answer is checked with GET: only a status that proves a confirm
   * (`InBoxArchived`) counts as done. `InBoxTransferred` is what a download leaves on the service:
   * read as "confirmed", the parcel would never be confirmed and would expire there.
   */
  async confirm(row: InboundRow, signal?: AbortSignal): Promise<{ committed: Promise<void> }> {
    let how: 'confirmed' | 'already-confirmed' = 'confirmed';
    try {
      await this.ctx.client.confirmParcel(row.parcel_id, { signal });
    } catch (err) {
      // An error answer (or a legacy `false`): the parcel may be confirmed already; its status decides.
      if (!((err instanceof GridApiError && !err.retryable) || err instanceof GridResponseError)) throw err;
      const info = await this.ctx.client.parcel(row.parcel_id, { signal });
      if (info.status !== CONFIRMED_STATUS) throw err;
      how = 'already-confirmed';
    }
    crashPoint('in.confirm-answered');
    if (how === 'confirmed') this.confirmedNow.add(row.parcel_id);
    return { committed: this.ctx.journal.markConfirmed(this.ctx.mailboxId, row.parcel_id, how).then(() => crashPoint('in.confirmed')) };
  }

  /**
   * A confirmed parcel listed again: list lag (ignore), a confirm that never took (confirm again),
   * or reset on the service after its confirm was seen to take (deliver again). `requested`: an
   * operator asked for it (`gridsync redeliver`, read by the listing for the whole list).
   */
  async isRedelivery(row: InboundRow, requested: boolean, signal?: AbortSignal): Promise<boolean> {
    const info = await this.ctx.client.parcel(row.parcel_id, { signal });
    if (info.status !== 'InBoxReady') {
      if (row.confirm_unverified) await this.ctx.journal.markConfirmsSeen(this.ctx.mailboxId, [row.parcel_id]);
      return false;
    }
    if (row.confirm_unverified) {
      await this.confirmAgain(row, signal);
      return false;
    }
    if (this.ctx.inbox.redelivery === 'ignore') {
      this.ctx.logger.warn(
        { parcelId: row.parcel_id },
        'parcel was reset on the service after we confirmed it; ignored (redelivery: ignore)',
      );
      return false;
    }
    const delivery = await this.ctx.journal.markRedelivery(this.ctx.mailboxId, row.parcel_id);
    const fields = { parcelId: row.parcel_id, delivery, previousPath: row.final_path };
    // Asked for by the operator: expected, so no warning.
    if (requested) this.ctx.logger.info(fields, 'redelivered on request: delivering it again under a new name');
    else this.ctx.logger.warn(fields, 'parcel was reset on the service after we confirmed it; delivering it again under a new name');
    return true;
  }

  /** The placement is recorded: the parcel is never placed again, only its confirm is repeated (the service calls it safe to repeat). */
  private async confirmAgain(row: InboundRow, signal?: AbortSignal): Promise<void> {
    this.ctx.logger.warn(
      { parcelId: row.parcel_id, file: row.final_path },
      'the service still shows a parcel we confirmed as ready: its confirm did not take; confirming it again (it is not placed again)',
    );
    try {
      await this.ctx.client.confirmParcel(row.parcel_id, { signal });
    } catch (err) {
      this.ctx.logger.warn({ ...errorFields(err), parcelId: row.parcel_id }, 'confirming again failed; tried again next cycle');
    }
  }

  /** Parcels of `ids` that a complete listing no longer shows left `InBoxReady`: their confirm took. */
  private async seeLeft(pending: PendingInbox, ids: Iterable<number>): Promise<void> {
    // A cut list proves nothing by what it leaves out.
    if (pending.omitted > 0) return;
    const listed = new Set(pending.parcels.map((p) => p.parcelId));
    await this.ctx.journal.markConfirmsSeen(
      this.ctx.mailboxId,
      [...ids].filter((id) => !listed.has(id)),
    );
  }

  /**
   * One listing after a cycle that confirmed parcels: those it no longer shows are seen to have
   * left (one call per cycle, not one lookup per parcel). This keeps the moment when a reset cannot
   * be told from a confirm that never took down to the cycle itself.
   */
  private async verifyConfirms(signal?: AbortSignal): Promise<void> {
    try {
      await this.seeLeft(await this.ctx.client.pendingInbox(this.ctx.mailboxId, { signal }), this.confirmedNow);
    } catch (err) {
      this.ctx.logger.debug({ ...errorFields(err) }, 'could not list the inbox again to see the confirms take; the next cycle does');
    }
  }
}
