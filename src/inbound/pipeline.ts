/**
 * The inbound pipeline of one mailbox: pending inbox → local inbox folder, exactly once per
 * delivery, confirmed only after the file is durably placed (docs/architecture.md#inbound-lifecycle).
 *
 * Work comes from the journal first (every row in an intermediate state, by parcel id) and from the
 * pending list second: on some service versions a downloaded parcel leaves the pending list before
 * it is confirmed, so the list is a hint of new work, never the truth of work begun. A download not
 * yet begun, though, waits for the list to show its parcel (./taken-elsewhere.ts).
 *
 * This module keeps the lifecycle (prerequisites, recovery, cycles) and the work queue that drives
 * each journal row to `confirmed`. The steps live beside it: `listing` (the pending list into the
 * journal), `download` (the network and local halves of a download, into `staging-file`),
 * `placement` (the final name, the rename, the marker), `confirmations` (confirm, and what a
 * confirmed parcel listed again means), `failures` (what a failed step means for the parcel).
 */
import fs from 'node:fs';
import path from 'node:path';
import PQueue from 'p-queue';
import { CallConcurrency } from '../api/index.js';
import { CrossFilesystemError, ensureDirDurable, FileCalls, onLocalFilesystems, sameFilesystem } from '../files/index.js';
import { ALWAYS_HELD, type MailboxLease } from '../journal/index.js';
import { EventBus, type PipelineEvents } from '../events/index.js';
import { codeOf, errorFields } from '../errors/index.js';
import { INBOUND_UNFINISHED, InboundJournal, type InboundRow } from '../journal/index.js';
import { silentLogger, type Logger } from '../log.js';
import { TrailingWork } from '../work/index.js';
import { Confirmations } from './confirmations.js';
import { DeferralNotices } from './deferral-notices.js';
import { ParcelDownload } from './download.js';
import { InboundFailures } from './failures.js';
import { InboxListing } from './listing.js';
import { PartnerNames } from './partner-names.js';
import { InboxPlacement } from './placement.js';
import { orphanedStaging } from './staging-names.js';
import { TakenElsewhere } from './taken-elsewhere.js';
import { tallyInbound } from './tally.js';
import {
  emptyInboundResult,
  type InboundContext,
  type InboundCycleResult,
  type InboundPipelineOptions,
  type InboxConfig,
} from './types.js';

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
  /** Local work after a download, and confirmations whose journal commit is still under way (see processParcel). */
  private readonly trailing: TrailingWork;
  private readonly events: EventBus<PipelineEvents>;
  private readonly ctx: InboundContext;
  private readonly partners: PartnerNames;
  private readonly placement: InboxPlacement;
  private readonly confirmations: Confirmations;
  /** Downloads at once (`inbox.concurrency`): fixed, or adapted to what the downloads show. */
  private readonly downloads: CallConcurrency;
  private readonly deferrals: DeferralNotices;
  private readonly listing: InboxListing;
  private readonly download: ParcelDownload;
  private readonly failures: InboundFailures;
  private readonly taken: TakenElsewhere;

  constructor(private readonly options: InboundPipelineOptions) {
    this.journal = new InboundJournal(options.journal, { mayLinger: () => this.active > 1 });
    this.events = options.events ?? new EventBus<PipelineEvents>();
    this.mailboxId = options.mailbox.mailboxId;
    this.inbox = options.mailbox.inbox;
    this.logger = (options.logger ?? silentLogger).child({ mailboxId: this.mailboxId, direction: 'in' });
    this.trailing = new TrailingWork((err) => this.logger.error({ ...errorFields(err) }, 'unexpected error in the work after a download'));
    this.now = options.now ?? Date.now;
    this.lease = options.lease ?? ALWAYS_HELD;
    this.stagingDir = options.mailbox.inbox.stagingDir ?? path.join(options.stateDir, 'staging');
    const events = this.events;
    const mailbox = options.mailbox.name;
    this.ctx = {
      client: options.client,
      journal: this.journal,
      inbox: this.inbox,
      mailboxId: this.mailboxId,
      mailbox,
      stagingDir: this.stagingDir,
      logger: this.logger,
      now: this.now,
      lease: this.lease,
      events,
      tally: (result, key, n, detail) => tallyInbound(events, mailbox, result, key, n, detail),
    };
    this.partners =
      options.partnerNames ?? new PartnerNames({ lookup: options.client.partnerName?.bind(options.client), logger: this.logger });
    this.placement = new InboxPlacement({
      inbox: this.inbox,
      logger: this.logger,
      mailboxId: this.mailboxId,
      journal: this.journal,
      partners: this.partners,
      now: this.now,
      lease: this.lease,
      calls: () => this.download.fileCalls(),
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
    this.listing = new InboxListing(this.ctx, this.confirmations);
    this.download = new ParcelDownload(this.ctx, this.placement);
    this.failures = new InboundFailures(this.ctx, this.placement, this.deferrals);
    this.taken = new TakenElsewhere(this.ctx, (parcelId) => this.download.stagingPath(parcelId));
  }

  /** Why the last parcel was deferred (the daemon reports it when deliveries stop). */
  get lastDeferReason(): string | undefined {
    return this.failures.lastDeferReason;
  }

  /**
   * Listed parcels gridsync cannot act on (an id above 2^53, no id), from the last listing, keyed
   * by the id as it arrived: reported in the log once and in `once`'s summary, never skipped silently.
   */
  get unreadable(): ReadonlyMap<string, { fileName?: string; reason: string; code: string }> {
    return this.listing.unreadable;
  }

  /** Parcels held back in the last cycle by a local condition (disk full, inbox not writable), with the reason. */
  get heldLocally(): ReadonlyMap<number, string> {
    return this.failures.heldLocally;
  }

  /** Start-up checks: folders exist and are writable, staging on the inbox's filesystem. */
  async checkPrerequisites(): Promise<void> {
    await ensureDirDurable(this.inbox.dir);
    await ensureDirDurable(this.stagingDir);
    // Only gridsync writes in staging: a staged file swapped before its link would be placed and confirmed.
    const st = await fs.promises.stat(this.stagingDir);
    if (st.uid === process.getuid?.() && (st.mode & 0o077) !== 0) await fs.promises.chmod(this.stagingDir, 0o700);
    if (!(await sameFilesystem(this.stagingDir, this.inbox.dir))) {
      throw new CrossFilesystemError(
        `staging ${this.stagingDir} and inbox ${this.inbox.dir} are on different filesystems: the final rename would not be atomic; set inbox.stagingDir to a folder on the inbox's filesystem`,
      );
    }
  }

  /** Finishes whatever a previous run left in an intermediate state (journal-driven, by parcel id). */
  async recover(opts: { signal?: AbortSignal } = {}): Promise<InboundCycleResult> {
    const result = emptyInboundResult();
    await fs.promises.mkdir(this.stagingDir, { recursive: true, mode: 0o700 });
    // Work begun only: a download not begun waits for a pending list to show its parcel (./taken-elsewhere.ts).
    await this.processRows(await this.journal.inStates(this.mailboxId, ['staged', 'placed']), result, opts.signal);
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
    this.failures.heldLocally.clear();
    const pending = await this.listing.list(result, signal);
    const rows = await this.journal.inStates(this.mailboxId, INBOUND_UNFINISHED);
    await this.processRows(await this.taken.drivable(rows, pending, signal), result, signal);
    await this.confirmations.afterCycle(signal);
  }

  private async processRows(rows: InboundRow[], result: InboundCycleResult, signal?: AbortSignal): Promise<void> {
    if (rows.length === 0) return;
    // Recreated if removed meanwhile; only with something to stage, so that an idle poll makes no file call.
    await fs.promises.mkdir(this.stagingDir, { recursive: true, mode: 0o700 });
    const queue = new PQueue({ concurrency: this.downloads.limit });
    const unfollow = this.downloads.follow(queue);
    try {
      // Per cycle: a share can be mounted over the inbox between cycles.
      this.download.beginCycle(FileCalls.of(await onLocalFilesystems(this.stagingDir, this.inbox.dir)));
      await this.placement.beginCycle();
      for (const row of rows) {
        void queue.add(() => this.processParcel(row.parcel_id, result, signal));
      }
      await queue.onIdle();
      await this.trailing.drain();
    } finally {
      unfollow();
      await this.placement.endCycle();
    }
  }

  /**
   * Drives one parcel from its journal state to `confirmed`, as far as it goes now. The parcel
   * holds its slot for the download only: across a WAN the local work after it (fsync, journal,
   * rename) and the confirm would otherwise keep a slot idle while nothing is on the wire, so
   * they go on outside it (`trailing`) while the next download starts; the cycle waits for them.
   */
  private async processParcel(parcelId: number, result: InboundCycleResult, signal?: AbortSignal): Promise<void> {
    // A parcel queued behind the stop or a lost lease starts nothing, not even its journal read:
    // with the journal's server frozen each such read waited for the connect timeout, queued
    // parcels a few at a time, and a cycle of 40 parcels took a minute to give up.
    if (signal?.aborted) return;
    const started = this.now();
    this.active++;
    try {
      const row = await this.journal.get(this.mailboxId, parcelId);
      if (!row || (row.state !== 'listed' && row.state !== 'downloading')) return await this.settle(parcelId, started, result, signal);
      // Downloaded parcels waiting for their local work are bounded too (memory, descriptors on a slow disk).
      await this.trailing.room(this.maxTrailing);
      const fetched = await this.downloads.measure(() => this.download.fetch(row, signal));
      this.active++;
      this.trailing.add(
        this.download
          .stage(row, fetched, signal)
          .then(() => this.settle(parcelId, started, result, signal))
          .catch((err: unknown) => this.failures.failed(parcelId, err, result, signal))
          .finally(() => this.active--),
      );
    } catch (err) {
      await this.failures.failed(parcelId, err, result, signal);
    } finally {
      this.active--;
    }
  }

  /** Parcels downloaded but not yet settled, at most: enough to hide the local work behind the network. */
  private readonly maxTrailing = (): number => 4 * this.downloads.limit;

  /** staged → placed → confirmed, as far as it goes now (a parcel recovered in those states starts here). */
  private async settle(parcelId: number, started: number, result: InboundCycleResult, signal?: AbortSignal): Promise<void> {
    try {
      let row = await this.journal.get(this.mailboxId, parcelId);
      if (row?.state === 'staged') {
        await this.placement.place(row, row.staging_path ?? this.download.stagingPath(row.parcel_id));
        this.ctx.tally(result, 'placed');
        row = await this.journal.get(this.mailboxId, parcelId);
      }
      if (row?.state === 'placed') {
        const placed = row;
        await this.placement.mark(placed);
        this.lease.assertMayAct();
        const { committed } = await this.confirmations.confirm(placed, signal);
        // The service has the confirmation; what is left is the journal's commit, which nothing
        // here depends on: the cycle waits for it.
        this.trailing.add(
          committed.then(
            () => this.received(placed, started, result),
            (err: unknown) => this.failures.failed(parcelId, err, result, signal),
          ),
        );
      }
    } catch (err) {
      await this.failures.failed(parcelId, err, result, signal);
    }
  }

  /** A confirmed parcel: counted, announced, logged; its name is free for later parcels. */
  private received(row: InboundRow, started: number, result: InboundCycleResult): void {
    this.placement.release(row.final_path);
    this.ctx.tally(result, 'confirmed', 1, {
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
}
