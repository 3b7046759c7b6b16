/**
 * What a failed step of a parcel means: deferred to the next cycle (the content is safe where it
 * is, or the cause is local or the service's), an attempt counted, or the parcel failed for good.
 * Each outcome is journalled, counted and logged here, once.
 */
import { ContentIntegrityError, GridApiError, GridError } from '../api/index.js';
import { codeOf, errorFields } from '../errors/index.js';
import { JournalLeaseLostError } from '../journal/index.js';
import type { DeferralNotices } from './deferral-notices.js';
import { DeferError, StagingLostError } from './errors.js';
import type { InboxPlacement } from './placement.js';
import type { InboundContext, InboundCycleResult } from './types.js';

export class InboundFailures {
  /** Why the last parcel was deferred (the daemon reports it when deliveries stop). */
  lastDeferReason: string | undefined;
  /** Parcels held back in the last cycle by a local condition (disk full, inbox not writable), with the reason. */
  readonly heldLocally = new Map<number, string>();

  constructor(
    private readonly ctx: InboundContext,
    private readonly placement: InboxPlacement,
    private readonly deferrals: DeferralNotices,
  ) {}

  /** Records a failed step of `parcelId`; never throws (a journal that fails too defers the parcel). */
  async failed(parcelId: number, err: unknown, result: InboundCycleResult, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return this.releaseName(parcelId);
    try {
      await this.handle(parcelId, err, result);
    } catch (journalErr) {
      // The journal itself failed (disk full stops even SQLite): the row keeps its state and the next cycle retries.
      this.ctx.tally(result, 'deferred', 1, { reason: describe(journalErr), code: codeOf(journalErr), parcelId });
      // The journal's error is the line's (its code to alert on); the attempt's beside it.
      this.ctx.logger.error(
        { parcelId, ...errorFields(journalErr), attemptErr: describe(err), attemptCode: codeOf(err) },
        'could not record a failed attempt in the journal',
      );
    }
  }

  private async handle(parcelId: number, err: unknown, result: InboundCycleResult): Promise<void> {
    const { ctx } = this;
    const reason = describe(err);
    const why = { reason, code: codeOf(err), parcelId };
    if (err instanceof JournalLeaseLostError) {
      // Another instance serves the mailbox now (or will): nothing to record, nothing to retry here.
      await this.releaseName(parcelId);
      ctx.tally(result, 'deferred', 1, why);
      ctx.logger.info({ code: err.code, parcelId }, 'parcel left to the mailbox lease holder');
      return;
    }
    const row = await ctx.journal.get(ctx.mailboxId, parcelId);
    if (err instanceof StagingLostError && row) {
      // Not the parcel's fault and not an attempt: it is simply fetched again, under a new name choice.
      this.placement.release(row.final_path);
      await ctx.journal.markStagingLost(ctx.mailboxId, parcelId, reason);
      this.lastDeferReason = reason;
      ctx.tally(result, 'deferred', 1, why);
      ctx.logger.warn(
        { code: err.code, parcelId, stagingPath: err.stagingPath, finalPath: err.finalPath },
        'the staged file is gone and the inbox does not hold its content; the parcel is downloaded again, not confirmed',
      );
      return;
    }
    if (row?.state === 'placed' && err instanceof GridApiError && err.httpStatus === 404 && !err.noSuchEndpoint) {
      // In the inbox, and the service no longer knows the parcel (expired, deleted while the inbox
      // was unusable): no confirm can ever take. Deferred, it was retried every cycle for ever.
      this.placement.release(row.final_path);
      await ctx.journal.markFailed(ctx.mailboxId, parcelId, reason);
      ctx.tally(result, 'failed', 1, why);
      ctx.logger.error(
        { ...errorFields(err), parcelId, file: row.final_path, err: reason },
        'parcel FAILED: it is in the inbox, but the service no longer knows it, so it cannot be confirmed',
      );
      return;
    }
    if (err instanceof DeferError || !row || row.state === 'staged' || row.state === 'placed') {
      // Placement or confirmation waits for the next cycle: the content is safe where it is.
      if (row) void ctx.journal.noteError(ctx.mailboxId, parcelId, reason);
      if (err instanceof DeferError || row?.state === 'staged') this.heldLocally.set(parcelId, reason);
      this.lastDeferReason = reason;
      ctx.tally(result, 'deferred', 1, why);
      // The cause usually holds every waiting parcel, cycle after cycle: warned once, then summed up.
      this.deferrals.defer(
        why.code,
        { ...errorFields(err), parcelId, state: row?.state, err: reason },
        'parcel deferred to the next cycle',
      );
      return;
    }
    if (err instanceof GridApiError && err.noSuchEndpoint) {
      // The service (or a proxy) has no such endpoint: not the parcel's fault, no attempt counted.
      void ctx.journal.noteError(ctx.mailboxId, parcelId, reason);
      this.lastDeferReason = reason;
      ctx.tally(result, 'deferred', 1, why);
      this.deferrals.defer(why.code, { ...errorFields(err), parcelId, err: reason }, 'the service has no such endpoint; parcel deferred');
      return;
    }
    // Below, the row leaves staged/placed: its name is free again.
    this.placement.release(row.final_path);
    if (err instanceof GridApiError && err.httpStatus === 404) {
      await ctx.journal.markFailed(ctx.mailboxId, parcelId, reason);
      ctx.tally(result, 'failed', 1, why);
      ctx.logger.error({ ...errorFields(err), parcelId, err: reason }, 'parcel failed: the service no longer knows it');
      return;
    }
    const state = await ctx.journal.recordAttemptFailure(ctx.mailboxId, parcelId, reason, ctx.inbox.maxAttempts);
    if (state === 'failed') {
      ctx.tally(result, 'failed', 1, why);
      ctx.logger.error(
        { ...errorFields(err), parcelId, attempts: ctx.inbox.maxAttempts, err: reason },
        'parcel FAILED after the last attempt: not placed, not confirmed; it stays on the service',
      );
    } else {
      this.lastDeferReason = reason;
      ctx.tally(result, 'deferred', 1, why);
      ctx.logger.warn({ ...errorFields(err), parcelId, err: reason }, 'download failed; will retry');
    }
  }

  /**
   * The parcel is left as the journal has it (the run stops, or another instance holds the
   * mailbox now): its name is no longer held in this process. Should the parcel come back here
   * staged or placed, each cycle reserves the journal's names anyway.
   */
  private async releaseName(parcelId: number): Promise<void> {
    const row = await this.ctx.journal.get(this.ctx.mailboxId, parcelId).catch(() => undefined);
    this.placement.release(row?.final_path ?? null);
  }
}

function describe(err: unknown): string {
  if (err instanceof ContentIntegrityError) return `${err.reason}: ${err.message}`;
  if (err instanceof GridError) return err.message;
  return err instanceof Error ? err.message : String(err);
}
