/**
 * The inbound pipeline of one mailbox: pending inbox → local inbox folder, exactly once per
 * delivery, confirmed only after the file is durably placed (docs/architecture.md#inbound-lifecycle).
 *
 * Work comes from the journal first (every row in an intermediate state, by parcel id) and from the
 * pending list second: on some service versions a downloaded parcel leaves the pending list before
 * it is confirmed, so the list is a hint of new work, never the truth.
 *
 * The steps live beside it: `staging-file` (the download's target), `placement` (the final name,
 * the rename, the marker), `confirmations` (confirm, and what a confirmed parcel listed again means).
 */
import fs from 'node:fs';
import path from 'node:path';
import PQueue from 'p-queue';
import { CallConcurrency, ContentIntegrityError, DownloadRoomError, GridApiError, GridError, type UnreadableParcel } from '../api/index.js';
import { CrossFilesystemError, ensureDirDurable, FileCalls, freeBytes, onLocalFilesystems, sameFilesystem } from '../files/index.js';
import { ALWAYS_HELD, crashPoint, JournalLeaseLostError, type MailboxLease } from '../journal/index.js';
import { DEFAULTS } from '../config/defaults.js';
import { EventBus, type DeliveredItem, type PipelineEvents } from '../events/index.js';
import { codeOf, errorFields } from '../errors/index.js';
import { InboundJournal, type InboundRow } from '../journal/index.js';
import { silentLogger, type Logger } from '../log.js';
import { Confirmations } from './confirmations.js';
import { DeferralNotices } from './deferral-notices.js';
import { DeferError, DISK_ERRORS, StagingLostError } from './errors.js';
import { PartnerNames } from './partner-names.js';
import { InboxPlacement } from './placement.js';
import { StagingFile } from './staging-file.js';
import { orphanedStaging, stagingName } from './staging-names.js';
import { emptyInboundResult, type InboundCycleResult, type InboundPipelineOptions, type InboxConfig } from './types.js';
import { oldestWaitingSeconds } from './waiting.js';

export class InboundPipeline {
  private readonly journal: InboundJournal;
  private readonly logger: Logger;
  private readonly now: () => number;
  private readonly stagingDir: string;
  private readonly inbox: InboxConfig;
  private readonly mailboxId: number;
  private readonly lease: MailboxLease;
  /** Parcels being driven right now: with company, their transitions may linger (group commit). */
  private active = 0;
  /** Confirmations whose journal commit is still under way (see processParcel). */
  private readonly trailing = new Set<Promise<void>>();
  /** Cheap file calls on this thread when staging and inbox are on local filesystems (files/calls). */
  private calls = FileCalls.POOL;
  /**
   * Free bytes in staging as last measured, less what every download started since may write (its
   * declared size, or all the room it was given when none was declared): one statfs per cycle
   * instead of one per parcel (measured again when it runs short).
   */
  private spaceLeft: number | undefined;
  /** Why the last parcel was deferred (the daemon reports it when deliveries stop). */
  lastDeferReason: string | undefined;
  private readonly events: EventBus<PipelineEvents>;
  private readonly partners: PartnerNames;
  private readonly placement: InboxPlacement;
  private readonly confirmations: Confirmations;
  /** Downloads at once (`inbox.concurrency`): fixed, or adapted to what the downloads show. */
  private readonly downloads: CallConcurrency;
  private readonly deferrals: DeferralNotices;
  /**
   * Listed parcels gridsync cannot act on (an id above 2^53, no id), from the last listing, keyed
   * by the id as it arrived: reported in the log once and in `once`'s summary, never skipped silently.
   */
  readonly unreadable = new Map<string, { fileName?: string; reason: string; code: string }>();
  /** Parcels held back in the last cycle by a local condition (disk full, inbox not writable), with the reason. */
  readonly heldLocally = new Map<number, string>();

  constructor(private readonly options: InboundPipelineOptions) {
    this.journal = new InboundJournal(options.journal, { mayLinger: () => this.active > 1 });
    this.events = options.events ?? new EventBus<PipelineEvents>();
    this.mailboxId = options.mailbox.mailboxId;
    this.inbox = options.mailbox.inbox;
    this.logger = (options.logger ?? silentLogger).child({ mailboxId: this.mailboxId, direction: 'in' });
    this.now = options.now ?? Date.now;
    this.lease = options.lease ?? ALWAYS_HELD;
    this.stagingDir = options.mailbox.inbox.stagingDir ?? path.join(options.stateDir, 'staging');
    this.partners =
      options.partnerNames ?? new PartnerNames({ lookup: options.client.partnerName?.bind(options.client), logger: this.logger });
    this.placement = new InboxPlacement({
      inbox: this.inbox,
      mailboxId: this.mailboxId,
      journal: this.journal,
      partners: this.partners,
      now: this.now,
      lease: this.lease,
      calls: () => this.calls,
    });
    this.downloads = new CallConcurrency(this.inbox.concurrency, this.inbox.maxConcurrency, {
      ...(options.client.overloadAnswers ? { overloadAnswers: options.client.overloadAnswers.bind(options.client) } : {}),
    });
    this.deferrals = new DeferralNotices(this.logger);
    this.confirmations = new Confirmations({
      client: options.client,
      journal: this.journal,
      inbox: this.inbox,
      mailboxId: this.mailboxId,
      logger: this.logger,
    });
  }

  /** Adds to the cycle's counters and tells the subscribers (`inbound:*` events). */
  private tally(
    result: InboundCycleResult,
    key: Exclude<keyof InboundCycleResult, 'bytes'>,
    n = 1,
    detail: { bytes?: number; reason?: string; code?: string; parcelId?: number; item?: DeliveredItem } = {},
  ): void {
    if (n === 0) return;
    result[key] += n;
    const mailbox = this.options.mailbox.name;
    switch (key) {
      case 'confirmed':
        result.bytes += detail.bytes ?? 0;
        this.events.emit('inbound:received', {
          mailbox,
          count: n,
          bytes: detail.bytes ?? 0,
          ...(detail.item ? { item: detail.item } : {}),
        });
        return;
      case 'failed':
      case 'deferred':
        this.events.emit(`inbound:${key}`, {
          mailbox,
          count: n,
          ...(detail.reason !== undefined ? { reason: detail.reason } : {}),
          ...(detail.code !== undefined ? { code: detail.code } : {}),
          ...(detail.parcelId !== undefined ? { parcelId: detail.parcelId } : {}),
        });
        return;
      case 'listed':
        this.events.emit('inbound:listed', { mailbox, count: n, bytes: detail.bytes ?? 0 });
        return;
      case 'unreadable':
        // Reported by noteUnreadable (log) and in `once`'s summary; no event of its own yet.
        return;
      default:
        this.events.emit(`inbound:${key}`, { mailbox, count: n });
    }
  }

  /** Start-up checks: folders exist and are writable, staging on the inbox's filesystem. */
  async checkPrerequisites(): Promise<void> {
    await ensureDirDurable(this.inbox.dir);
    await ensureDirDurable(this.stagingDir);
    if (!(await sameFilesystem(this.stagingDir, this.inbox.dir))) {
      throw new CrossFilesystemError(
        `staging ${this.stagingDir} and inbox ${this.inbox.dir} are on different filesystems: the final rename would not be atomic; set inbox.stagingDir to a folder on the inbox's filesystem`,
      );
    }
  }

  /** Finishes whatever a previous run left in an intermediate state (journal-driven, by parcel id). */
  async recover(opts: { signal?: AbortSignal } = {}): Promise<InboundCycleResult> {
    const result = emptyInboundResult();
    await fs.promises.mkdir(this.stagingDir, { recursive: true });
    await this.processRows(await this.journal.inStates(this.mailboxId, ['downloading', 'staged', 'placed']), result, opts.signal);
    await this.removeOrphanedStaging();
    return result;
  }

  /** Under a shared journal, after a takeover: the downloads earlier holders left unfinished. */
  private async removeOrphanedStaging(): Promise<void> {
    const token = this.lease.token();
    if (token === undefined) return;
    const rows = await this.journal.inStates(this.mailboxId, ['downloading', 'staged']);
    const referenced = new Set(rows.flatMap((r) => (r.staging_path ? [path.basename(r.staging_path)] : [])));
    const names = await fs.promises.readdir(this.stagingDir);
    for (const name of orphanedStaging(names, this.mailboxId, token, referenced)) {
      await fs.promises.rm(path.join(this.stagingDir, name), { force: true });
      this.logger.info({ file: path.join(this.stagingDir, name) }, 'removed a download an earlier lease holder left unfinished');
    }
  }

  /** One cycle: the journal's unfinished rows, then what the pending list shows. */
  async runCycle(opts: { signal?: AbortSignal } = {}): Promise<InboundCycleResult> {
    const result = emptyInboundResult();
    const mailbox = this.options.mailbox.name;
    const started = this.now();
    this.events.emit('cycle:start', { mailbox, direction: 'in' });
    try {
      await this.cycle(result, opts.signal);
      this.deferrals.endCycle();
      this.events.emit('cycle:end', { mailbox, direction: 'in', durationMs: this.now() - started, counts: { ...result } });
      return result;
    } catch (err) {
      this.deferrals.abandonCycle();
      this.events.emit('cycle:end', {
        mailbox,
        direction: 'in',
        durationMs: this.now() - started,
        counts: { ...result },
        code: codeOf(err),
      });
      throw err;
    }
  }

  private async cycle(result: InboundCycleResult, signal: AbortSignal | undefined): Promise<void> {
    const opts = signal ? { signal } : {};
    this.heldLocally.clear();
    const pending = await this.options.client.pendingInbox(this.mailboxId, opts);
    this.noteUnreadable(pending.unreadable);
    if (pending.omitted > 0) {
      this.logger.warn(
        { taken: pending.parcels.length, omitted: pending.omitted },
        'the pending list is longer than api.limits.maxListEntries; the rest is taken in later cycles',
      );
    }
    this.tally(result, 'unreadable', pending.unreadable.length);
    await this.confirmations.noteListing(pending);
    const listings: Promise<boolean>[] = [];
    // Parcels we delivered may linger in the list for a while: only the others can expire unseen.
    const waiting: (string | undefined)[] = [];
    const listingBytes: number[] = [];
    // One read for the whole list: on PostgreSQL a read per parcel was a round trip per parcel.
    const known = await this.journal.getMany(
      this.mailboxId,
      pending.parcels.map((p) => p.parcelId),
    );
    for (const p of pending.parcels) {
      const row = known.get(p.parcelId);
      if (row?.state !== 'confirmed') waiting.push(p.created);
      if (!row) {
        const listing = this.journal.recordListed(this.mailboxId, {
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
      } else if (row.state === 'confirmed') {
        if (await this.confirmations.isRedelivery(row, signal)) this.tally(result, 'redelivered');
      }
    }
    const listed = await Promise.all(listings);
    this.tally(result, 'listed', listed.filter(Boolean).length, {
      bytes: listed.reduce((n, isNew, i) => n + (isNew ? (listingBytes[i] ?? 0) : 0), 0),
    });
    this.events.emit('inbound:waiting', {
      mailbox: this.options.mailbox.name,
      count: waiting.length,
      oldestAgeSeconds: oldestWaitingSeconds(waiting, this.now() + (this.options.client.serviceClockOffsetMs?.() ?? 0)),
    });
    const rows = await this.journal.inStates(this.mailboxId, ['listed', 'downloading', 'staged', 'placed']);
    await this.processRows(rows, result, signal);
    await this.confirmations.afterCycle(signal);
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
      this.events.emit('inbound:skipped', {
        mailbox: this.options.mailbox.name,
        count: 1,
        reason: r.error.message,
        code: r.error.code,
      });
      if (!before.has(key)) {
        this.logger.error(
          { code: r.error.code, parcelId: r.roughId, fileName: r.fileName, err: r.error.message },
          'listed parcel cannot be acted on; it stays on the service',
        );
      }
    });
  }

  private async processRows(rows: InboundRow[], result: InboundCycleResult, signal?: AbortSignal): Promise<void> {
    if (rows.length === 0) return;
    // Recreated if removed meanwhile; only with something to stage, so that an idle poll makes no file call.
    await fs.promises.mkdir(this.stagingDir, { recursive: true });
    const queue = new PQueue({ concurrency: this.downloads.limit });
    const unfollow = this.downloads.follow(queue);
    this.spaceLeft = undefined;
    // Per cycle: a share can be mounted over the inbox between cycles.
    this.calls = FileCalls.of(await onLocalFilesystems(this.stagingDir, this.inbox.dir));
    await this.placement.beginCycle();
    try {
      for (const row of rows) {
        void queue.add(() => this.processParcel(row.parcel_id, result, signal));
      }
      await queue.onIdle();
      while (this.trailing.size > 0) await Promise.all(this.trailing);
    } finally {
      unfollow();
      await this.placement.endCycle();
    }
  }

  /**
   * Drives one parcel from its journal state to `confirmed`, as far as it goes now. The parcel
   * holds its slot for the download only: across a WAN the local work after it (fsync, journal,
   * rename) and the confirm would otherwise keep a slot idle while nothing is on the wire, so
   * they go on outside it (`trail`) while the next download starts; the cycle waits for them.
   */
  private async processParcel(parcelId: number, result: InboundCycleResult, signal?: AbortSignal): Promise<void> {
    const started = this.now();
    this.active++;
    try {
      const row = await this.journal.get(this.mailboxId, parcelId);
      if (!row || (row.state !== 'listed' && row.state !== 'downloading')) return await this.settle(parcelId, started, result, signal);
      // Downloaded parcels waiting for their local work are bounded too (memory, descriptors on a slow disk).
      while (this.trailing.size >= this.maxTrailing()) await Promise.race(this.trailing);
      const fetched = await this.downloads.measure(() => this.fetch(row, signal));
      this.active++;
      this.trail(
        this.stage(row, fetched)
          .then(() => this.settle(parcelId, started, result, signal))
          .catch((err: unknown) => this.failed(parcelId, err, result, signal))
          .finally(() => this.active--),
      );
    } catch (err) {
      await this.failed(parcelId, err, result, signal);
    } finally {
      this.active--;
    }
  }

  /** Parcels downloaded but not yet settled, at most: enough to hide the local work behind the network. */
  private maxTrailing(): number {
    return 4 * this.downloads.limit;
  }

  /** staged → placed → confirmed, as far as it goes now (a parcel recovered in those states starts here). */
  private async settle(parcelId: number, started: number, result: InboundCycleResult, signal?: AbortSignal): Promise<void> {
    try {
      let row = await this.journal.get(this.mailboxId, parcelId);
      if (row?.state === 'staged') {
        await this.placement.place(row, row.staging_path ?? this.stagingPath(row.parcel_id));
        this.tally(result, 'placed');
        row = await this.journal.get(this.mailboxId, parcelId);
      }
      if (row?.state === 'placed') {
        const placed = row;
        await this.placement.mark(placed);
        this.lease.assertMayAct();
        const { committed } = await this.confirmations.confirm(placed, signal);
        // The service has the confirmation; what is left is the journal's commit, which nothing
        // here depends on: the cycle waits for it.
        this.trail(
          committed.then(
            () => this.received(placed, started, result),
            (err: unknown) => this.failed(parcelId, err, result, signal),
          ),
        );
      }
    } catch (err) {
      await this.failed(parcelId, err, result, signal);
    }
  }

  /** A confirmed parcel: counted, announced, logged; its name is free for later parcels. */
  private received(row: InboundRow, started: number, result: InboundCycleResult): void {
    this.placement.release(row.final_path);
    this.tally(result, 'confirmed', 1, {
      bytes: row.bytes ?? 0,
      item: {
        parcelId: row.parcel_id,
        fileName: row.file_name,
        path: row.final_path,
        partner: row.grid_id_from,
        partnerName: this.partners.known(row.grid_id_from),
      },
    });
    this.logger.info(
      { parcelId: row.parcel_id, file: row.final_path, bytes: row.bytes, durationMs: this.now() - started, delivery: row.delivery },
      'parcel received',
    );
  }

  private async failed(parcelId: number, err: unknown, result: InboundCycleResult, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return;
    try {
      await this.handleFailure(parcelId, err, result);
    } catch (journalErr) {
      // The journal itself failed (disk full stops even SQLite): the row keeps its state and the next cycle retries.
      this.tally(result, 'deferred', 1, { reason: describe(journalErr), code: codeOf(journalErr), parcelId });
      this.logger.error(
        { parcelId, err: describe(err), journalErr: describe(journalErr) },
        'could not record a failed attempt in the journal',
      );
    }
  }

  /** Work that finishes after its parcel's slot was freed; processRows waits for all of it. */
  private trail(work: Promise<void>): void {
    const tracked = work.catch((err: unknown) => {
      this.logger.error({ ...errorFields(err) }, 'unexpected error in the work after a download');
    });
    this.trailing.add(tracked);
    void tracked.finally(() => this.trailing.delete(tracked));
  }

  private async handleFailure(parcelId: number, err: unknown, result: InboundCycleResult): Promise<void> {
    const reason = describe(err);
    const why = { reason, code: codeOf(err), parcelId };
    if (err instanceof JournalLeaseLostError) {
      // Another instance serves the mailbox now (or will): nothing to record, nothing to retry here.
      this.tally(result, 'deferred', 1, why);
      this.logger.info({ code: err.code, parcelId }, 'parcel left to the mailbox lease holder');
      return;
    }
    const row = await this.journal.get(this.mailboxId, parcelId);
    if (err instanceof StagingLostError && row) {
      // Not the parcel's fault and not an attempt: it is simply fetched again, under a new name choice.
      this.placement.release(row.final_path);
      await this.journal.markStagingLost(this.mailboxId, parcelId, reason);
      this.lastDeferReason = reason;
      this.tally(result, 'deferred', 1, why);
      this.logger.warn(
        { code: err.code, parcelId, stagingPath: err.stagingPath, finalPath: err.finalPath },
        'the staged file is gone and the inbox does not hold its content; the parcel is downloaded again, not confirmed',
      );
      return;
    }
    if (err instanceof DeferError || !row || row.state === 'staged' || row.state === 'placed') {
      // Placement or confirmation waits for the next cycle: the content is safe where it is.
      if (row) void this.journal.noteError(this.mailboxId, parcelId, reason);
      if (err instanceof DeferError || row?.state === 'staged') this.heldLocally.set(parcelId, reason);
      this.lastDeferReason = reason;
      this.tally(result, 'deferred', 1, why);
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
      void this.journal.noteError(this.mailboxId, parcelId, reason);
      this.lastDeferReason = reason;
      this.tally(result, 'deferred', 1, why);
      this.deferrals.defer(why.code, { ...errorFields(err), parcelId, err: reason }, 'the service has no such endpoint; parcel deferred');
      return;
    }
    // Below, the row leaves staged/placed: its name is free again.
    this.placement.release(row.final_path);
    if (err instanceof GridApiError && err.httpStatus === 404) {
      await this.journal.markFailed(this.mailboxId, parcelId, reason);
      this.tally(result, 'failed', 1, why);
      this.logger.error({ ...errorFields(err), parcelId, err: reason }, 'parcel failed: the service no longer knows it');
      return;
    }
    const state = await this.journal.recordAttemptFailure(this.mailboxId, parcelId, reason, this.inbox.maxAttempts);
    if (state === 'failed') {
      this.tally(result, 'failed', 1, why);
      this.logger.error(
        { ...errorFields(err), parcelId, attempts: this.inbox.maxAttempts, err: reason },
        'parcel FAILED after the last attempt: not placed, not confirmed; it stays on the service',
      );
    } else {
      this.lastDeferReason = reason;
      this.tally(result, 'deferred', 1, why);
      this.logger.warn({ ...errorFields(err), parcelId, err: reason }, 'download failed; will retry');
    }
  }

  /**
   * Under a shared journal the name carries the lease's token: a stale owner still writing its
   * download never writes into the file the new owner verified and is about to place.
   */
  private stagingPath(parcelId: number): string {
    return path.join(this.stagingDir, stagingName(this.mailboxId, parcelId, this.lease.token()));
  }

  /** The network half of a download: the content received into its staging target (not yet durable). */
  private async fetch(row: InboundRow, signal?: AbortSignal): Promise<Fetched> {
    const declared = row.declared_bytes ?? 0;
    const margin = this.inbox.minFreeBytes ?? DEFAULTS.inbox.minFreeBytes;
    const need = declared + margin;
    if (this.spaceLeft === undefined || this.spaceLeft < need) this.spaceLeft = await freeBytes(this.stagingDir);
    // The declared size only refuses early; the room holds on the bytes that actually arrive.
    if (this.spaceLeft < need)
      throw new DeferError(`not enough free space in ${this.stagingDir}: ${this.spaceLeft} bytes free, ${need} needed`);
    const roomBytes = this.spaceLeft - margin;
    this.spaceLeft -= row.declared_bytes ?? roomBytes;
    this.lease.assertMayAct();
    // No journal write before the download: a crash during it leaves the row `listed` and the
    // next attempt rewrites the .part from the start (its path follows from the parcel id).
    const part = this.stagingPath(row.parcel_id);
    const target = new StagingFile(part, this.inbox.fileMode ?? DEFAULTS.fileMode, this.calls);
    try {
      const info = await this.options.client.downloadParcel(row.parcel_id, target, {
        ...(row.declared_bytes !== null ? { expectedBytes: row.declared_bytes } : {}),
        roomBytes,
        ...(signal ? { signal } : {}),
      });
      return { part, target, info };
    } catch (err) {
      throw await this.discarded(target, part, err);
    }
  }

  /** The local half: the staging file made durable, its final name chosen, `staged` journalled. */
  private async stage(row: InboundRow, { part, target, info }: Fetched): Promise<void> {
    try {
      await target.finish();
    } catch (err) {
      throw await this.discarded(target, part, err);
    }
    crashPoint('in.downloaded');
    const fileName = info.fileName ?? row.file_name;
    const finalPath = await this.placement.chooseFinalPath(row, fileName);
    await this.journal.markStaged(this.mailboxId, row.parcel_id, {
      stagingPath: part,
      bytes: info.bytes,
      sha256: info.sha256,
      finalPath,
      fileName,
    });
    crashPoint('in.staged');
  }

  /** Drops a failed attempt's staging file; a full or unwritable disk defers the parcel instead of failing it. */
  private async discarded(target: StagingFile, part: string, err: unknown): Promise<unknown> {
    await target.discardAttempt();
    if (DISK_ERRORS.has((err as NodeJS.ErrnoException).code ?? ''))
      return new DeferError(`cannot write ${part}: ${(err as Error).message}`);
    if (err instanceof DownloadRoomError) {
      const margin = this.inbox.minFreeBytes ?? DEFAULTS.inbox.minFreeBytes;
      return new DeferError(`not enough free space in ${this.stagingDir}: ${err.message} (inbox.minFreeBytes ${margin})`, { cause: err });
    }
    return err;
  }
}

interface Fetched {
  readonly part: string;
  readonly target: StagingFile;
  readonly info: Awaited<ReturnType<InboundPipelineOptions['client']['downloadParcel']>>;
}

function describe(err: unknown): string {
  if (err instanceof ContentIntegrityError) return `${err.reason}: ${err.message}`;
  if (err instanceof GridError) return err.message;
  return err instanceof Error ? err.message : String(err);
}
