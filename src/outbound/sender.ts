/**
 * Sending one claimed file exactly once: the checks before sending, the upload, and the
 * reconciliation of an upload whose outcome is unknown. What happens after a failed attempt is
 * one pure policy, `decideResend`.
 */
import PQueue from 'p-queue';
import {
  CallConcurrency,
  GridApiError,
  UploadSourceChangedError,
  GridTransportError,
  isPermanent,
  mayHaveReachedService,
  UploadOutcomeUnknownError,
  searchStart,
  type MailboxTransport,
} from '../api/index.js';
import { DEFAULTS } from '../config/defaults.js';
import { crashPoint, JournalLeaseLostError, pausePoint } from '../journal/index.js';
import type { OutboundRow, OutboundState } from '../journal/index.js';
import { refusalOf, type Refusal } from './checks.js';
import type { Disposal } from './disposal.js';
import type { OutboxContext } from './types.js';
import { codeOf, errorFields } from '../errors/index.js';

/**
 * After a failed upload attempt:
 * - `reject`: the service answered that it will not take the file — errorDir;
 * - `resend`: the request provably never reached the service (a 429, no connection) — back to
 *   `claimed`, a plain resend is safe;
 * - `reconcile`: it may have reached the service — stay `uploading`; the next pass looks for the
 *   parcel in the outbox list before any resend (a resend here is how a duplicate happens);
 * - `give-up`: answered retryable failures used up the attempts — errorDir;
 * - `refuse`: the claimed copy is not the size it was claimed with, found before any byte went
 *   out — errorDir: sending it again cannot help, it is not what the ERP exported any more;
 * - `retry`: try again later (a service that is down is not the file's fault: only answered
 *   errors count towards the attempts).
 * Whether the request reached the service is the client's rule (`mayHaveReachedService`), not
 * re-derived here.
 */
export type ResendDecision = 'reject' | 'refuse' | 'resend' | 'reconcile' | 'give-up' | 'retry';

export function decideResend(err: unknown, state: OutboundState, attempts: number, maxAttempts: number): ResendDecision {
  if (err instanceof UploadOutcomeUnknownError) return 'reconcile';
  if (err instanceof UploadSourceChangedError && err.notSent) return 'refuse';
  if (err instanceof GridApiError && !err.retryable) return 'reject';
  const neverReached = !mayHaveReachedService(err);
  if (state === 'uploading' && !neverReached) return 'reconcile';
  if (err instanceof GridApiError && attempts >= maxAttempts) return 'give-up';
  return neverReached && state === 'uploading' ? 'resend' : 'retry';
}

/** A `Date` header counts whole seconds: offsets closer than this are the same clock. */
const CLOCK_RESOLUTION_MS = 1000;

export class Sender {
  /**
   * Uploads in flight, at most `outbox.concurrency` (fixed or adaptive, `uploads`): a slot holds
   * the upload request alone. The commits around it (`uploading` before, durable before anything
   * is sent; `uploaded` after) run outside it, so that across a WAN the journal's fsyncs overlap
   * other files' uploads.
   */
  private readonly wire: PQueue;
  readonly uploads: CallConcurrency;
  /**
   * Under a shared journal, the token under which this process started the upload of each row
   * still `uploading`: a row not here (or under another token) was left by an earlier holder.
   * A row leaves it as soon as it leaves `uploading` on this process's watch.
   */
  private readonly startedUnder = new Map<number, number>();
  /** Per file name, the end of the last row's turn: rows of one name are sent one after another. */
  private readonly nameTurns = new Map<string, Promise<void>>();

  constructor(
    private readonly ctx: OutboxContext,
    private readonly client: MailboxTransport,
    private readonly disposal: Disposal,
  ) {
    this.uploads = new CallConcurrency(ctx.cfg.concurrency, ctx.cfg.maxConcurrency, {
      ...(client.overloadAnswers ? { overloadAnswers: client.overloadAnswers.bind(client) } : {}),
    });
    this.wire = new PQueue({ concurrency: this.uploads.limit });
    this.uploads.follow(this.wire);
  }

  /**
   * The claimed copy in processing is gone (an operator cleared the folder): it was not sent —
   * for an `uploading` row, once the outbox list said so — and nothing is left to send. Without
   * this the row stayed claimed for good, each pass failing on the missing file. Asked only once
   * reading the copy failed, or an unknown upload was not found: never on the way of a send.
   */
  private async copyRemoved(row: OutboundRow): Promise<Refusal | undefined> {
    if (await this.ctx.calls.exists(row.processing_path as string)) return undefined;
    return {
      reason: 'its claimed copy in the processing folder was removed before it was sent: nothing was sent',
      errorCode: 'OUTBOUND_COPY_REMOVED',
    };
  }

  /** The checks before sending (`refusalOf`), on the claimed snapshot; a snapshot gone is a refusal too. */
  async check(row: OutboundRow): Promise<Refusal | undefined> {
    try {
      return await refusalOf(row, this.ctx.cfg, this.ctx.journal, this.ctx.now());
    } catch (err) {
      const removed = (err as NodeJS.ErrnoException).code === 'ENOENT' ? await this.copyRemoved(row) : undefined;
      if (removed) return removed;
      throw err;
    }
  }

  /** A file that will not be sent: counted as rejected, to errorDir with the reason. */
  async refuse(row: OutboundRow, refusal: Refusal): Promise<void> {
    this.startedUnder.delete(row.id);
    this.ctx.tally('rejected', 1, { reason: refusal.reason, code: refusal.errorCode, file: row.file_name });
    await this.disposal.toError(row, refusal);
  }

  /**
   * claimed/uploading → uploaded, one row of a file name at a time. The outbox list tells parcels
   * apart by name and size only: two same-named exports of one size (a daily file re-exported
   * during an outage) sent or reconciled side by side could each take the other's parcel for its
   * own — one content never sent, both archived as sent. So rows of one name take turns here, and
   * a row whose older namesake's outcome is still unknown waits for a later pass. Returns true
   * when the row is now uploaded.
   */
  async upload(row: OutboundRow): Promise<boolean> {
    const name = row.file_name;
    const before = this.nameTurns.get(name);
    let ended!: () => void;
    const turn = new Promise<void>((resolve) => (ended = resolve));
    this.nameTurns.set(name, turn);
    try {
      await before;
      if (await this.ctx.journal.olderUploading(row)) {
        this.ctx.tally('deferred', 1, { file: name, reason: 'an older file of this name waits for its upload outcome' });
        return false;
      }
      return await this.send(row);
    } finally {
      ended();
      if (this.nameTurns.get(name) === turn) this.nameTurns.delete(name);
    }
  }

  /**
   * A row found in `uploading` may have reached the service before a crash or an ambiguous
   * failure: reconcile with the outbox list before sending again.
   */
  private async send(row: OutboundRow): Promise<boolean> {
    const { cfg, journal, logger } = this.ctx;
    try {
      if (row.state === 'uploading') {
        if (this.mustWaitForEarlierHolder(row)) return false;
        let found: number | undefined;
        try {
          found = await this.reconcile(row);
        } catch (err) {
          return await this.reconcileFailed(row, err);
        }
        if (found !== undefined) {
          await journal.markUploaded(row.id, found, 'reconciled');
          this.startedUnder.delete(row.id);
          logger.warn(
            { file: row.file_name, parcelId: found },
            'upload outcome was unknown; found the parcel on the service and adopted it (no second send)',
          );
          this.ctx.tally('uploaded');
          return true;
        }
        const removed = await this.copyRemoved(row);
        if (removed) {
          await this.refuse(row, removed);
          return false;
        }
        if (row.attempts >= cfg.maxAttempts) {
          this.startedUnder.delete(row.id);
          await this.disposal.toError(row, {
            reason: `gave up after ${row.attempts} attempts: ${row.last_error ?? 'unknown error'}`,
            errorCode: row.error_code,
            httpStatus: row.http_status,
          });
          this.ctx.tally('failed');
          return false;
        }
      }
      const attemptStart = this.ctx.now();
      const offset = this.client.serviceClockOffsetMs?.();
      await journal.markUploading(row.id, attemptStart, offset === undefined ? null : attemptStart + offset);
      const token = this.ctx.lease.token();
      if (token !== undefined) this.startedUnder.set(row.id, token);
      crashPoint('out.uploading');
      const { parcelId } = await this.wire.add(() => {
        // A holder frozen here and woken after its lease ran out sends nothing: the check follows
        // the pause, inside the slot, right before the request. The request itself is aborted when
        // the lease is lost.
        pausePoint('out.before-upload');
        this.ctx.lease.assertMayAct();
        const signal = this.ctx.lease.signal();
        return this.uploads.measure(() =>
          this.client.uploadParcel(
            row.processing_path as string,
            {
              fileName: row.file_name,
              mailboxId: this.ctx.mailboxId,
              ...(row.bytes !== null ? { expectedBytes: row.bytes } : {}),
              ...(cfg.gridIdFrom !== undefined ? { gridIdFrom: cfg.gridIdFrom } : {}),
              ...(cfg.gridIdTo !== undefined ? { gridIdTo: cfg.gridIdTo } : {}),
            },
            { onBodySent: () => crashPoint('out.request-sent'), calls: this.ctx.calls, ...(signal ? { signal } : {}) },
          ),
        );
      });
      crashPoint('out.response-received');
      await journal.markUploaded(row.id, parcelId, 'uploaded');
      this.startedUnder.delete(row.id);
      this.ctx.tally('uploaded');
      crashPoint('out.uploaded');
      return true;
    } catch (err) {
      return this.uploadFailed(row.id, err);
    }
  }

  /**
   * Without an answer from the outbox list nothing is known: the row stays `uploading` and the
   * list is asked again next pass — never a fall-through to a send (that is how a duplicate would
   * happen). When the list refuses us or answers what cannot be read, asking again will not help:
   * each such try counts as an attempt, and after `maxAttempts` the file goes to errorDir, saying
   * that only the service can tell whether it arrived.
   */
  private async reconcileFailed(row: OutboundRow, err: unknown): Promise<false> {
    const { cfg, journal, logger } = this.ctx;
    const note = `reconciliation failed: ${(err as Error).message}`;
    let attempts = 0;
    if (isPermanent(err)) attempts = await journal.countReconcileFailure(row.id, note);
    else void journal.noteError(row.id, note);
    if (attempts >= cfg.maxAttempts) {
      this.startedUnder.delete(row.id);
      const api = err instanceof GridApiError ? err : undefined;
      await this.disposal.toError(row, {
        reason: `the upload's outcome is unknown and the outbox list cannot tell (${attempts} attempts: ${(err as Error).message}); check on the service whether it arrived before requeueing it`,
        errorCode: api?.errorCode ?? codeOf(err),
        httpStatus: api?.httpStatus,
      });
      this.ctx.tally('failed', 1, { code: codeOf(err), file: row.file_name, reason: note });
      return false;
    }
    this.ctx.tally('deferred', 1, { code: codeOf(err), file: row.file_name, reason: 'the unknown upload cannot be reconciled yet' });
    logger.warn({ file: row.file_name, ...errorFields(err) }, 'cannot reconcile the unknown upload yet; will ask the outbox list again');
    return false;
  }

  /**
   * A row left `uploading` under an earlier lease holder (another instance, or this one before a
   * lost lease) may still have its request on the way: it waits until that holder's lease has surely
   * expired — the takeover came after the expiry — plus the longest an upload lasts, then the
   * usual reconciliation decides. Until then it is deferred.
   */
  private mustWaitForEarlierHolder(row: OutboundRow): boolean {
    const token = this.ctx.lease.token();
    if (token === undefined || this.startedUnder.get(row.id) === token) return false;
    const waitMs = this.ctx.lease.heldSince() + this.ctx.longestUploadMs - this.ctx.monotonic();
    if (waitMs <= 0) return false;
    this.ctx.tally('deferred');
    this.ctx.logger.info(
      { file: row.file_name, waitMs: Math.ceil(waitMs) },
      'an upload started by an earlier lease holder may still reach the service; reconciling after it surely ended',
    );
    return true;
  }

  private async uploadFailed(id: number, err: unknown): Promise<false> {
    const { cfg, journal, logger } = this.ctx;
    if (err instanceof JournalLeaseLostError) {
      this.startedUnder.delete(id); // taken again later, under another token: reconciled after the wait
      this.ctx.tally('deferred', 1, { code: err.code });
      logger.info({ id, code: err.code }, 'upload left to the mailbox lease holder');
      return false;
    }
    const row = (await journal.get(id)) as OutboundRow;
    const reason = (err as Error).message;
    const api = err instanceof GridApiError ? err : undefined;
    const decision = decideResend(err, row.state, row.attempts, cfg.maxAttempts);
    // Only a row that stays `uploading` (to be reconciled) still needs its attempt's token.
    if (decision !== 'reconcile') this.startedUnder.delete(id);
    switch (decision) {
      case 'refuse':
        if (row.state === 'uploading') await journal.markNotSent(id, reason);
        await this.refuse((await journal.get(id)) as OutboundRow, {
          reason: `its claimed copy in the processing folder ${(err as UploadSourceChangedError).detail}: nothing was sent; have the ERP export the file again`,
          errorCode: 'OUTBOUND_COPY_CHANGED',
        });
        return false;
      case 'reject':
        this.ctx.tally('failed', 1, { code: codeOf(err), file: row.file_name, reason });
        await this.disposal.toError(row, {
          reason: `rejected by the service: ${api?.serviceMessage || reason}`,
          errorCode: api?.errorCode,
          httpStatus: api?.httpStatus,
        });
        return false;
      case 'reconcile':
        void journal.noteError(id, reason);
        this.ctx.tally('deferred', 1, { code: codeOf(err), file: row.file_name, reason });
        logger.warn({ file: row.file_name, err: reason }, 'upload outcome unknown; will reconcile with the outbox list before any resend');
        return false;
      case 'give-up':
        if (row.state === 'uploading') await journal.markNotSent(id, reason);
        this.ctx.tally('failed', 1, { code: codeOf(err), file: row.file_name, reason });
        await this.disposal.toError((await journal.get(id)) as OutboundRow, {
          reason: `gave up after ${row.attempts} attempts: ${reason}`,
          errorCode: api?.errorCode,
          httpStatus: api?.httpStatus,
        });
        return false;
      case 'resend':
        await journal.markNotSent(id, reason);
        break;
      case 'retry':
        break;
    }
    this.ctx.tally('deferred', 1, { code: codeOf(err), file: row.file_name, reason });
    logger.warn({ file: row.file_name, err: reason, transport: err instanceof GridTransportError }, 'upload failed; will retry');
    return false;
  }

  /**
   * A parcel with our file name and byte count created since the attempt started, not yet adopted.
   * The service stamps `created` with a clock we know only through its `Date` headers, which a proxy
   * may date wrongly: the window starts at the earliest reading of the attempt's start, ours or the
   * service's, less the slack; readings too far apart refuse the search (`searchStart`). The listing
   * is itself a dated answer: when it moves the window earlier, the search is made once more.
   */
  private async reconcile(row: OutboundRow): Promise<number | undefined> {
    const started = row.attempt_started_at ?? row.created_at;
    const slack = this.ctx.cfg.reconcileSlackMs ?? DEFAULTS.outbox.reconcileSlackMs;
    // The service's reading by the offset seen now as well as the one journalled at the attempt:
    // had our clock been stepped back since, the former is later by the step, the latter is not.
    const windowStart = (): number => {
      const offset = this.client.serviceClockOffsetMs?.();
      const readings = [started];
      if (row.attempt_service_at !== null) readings.push(row.attempt_service_at);
      if (offset !== undefined) readings.push(started + offset);
      return searchStart('outbox list', readings) - slack;
    };
    const first = windowStart();
    const found = await this.search(row, first);
    if (found !== undefined) return found;
    const corrected = windowStart();
    return corrected < first - CLOCK_RESOLUTION_MS ? this.search(row, corrected) : undefined;
  }

  private async search(row: OutboundRow, since: number): Promise<number | undefined> {
    for await (const parcel of this.client.outboxParcels({ mailboxId: this.ctx.mailboxId, since: new Date(since).toISOString() })) {
      if (parcel.fileName === row.file_name && parcel.bytes === row.bytes && !(await this.ctx.journal.isAdopted(parcel.parcelId)))
        return parcel.parcelId;
    }
    return undefined;
  }
}
