/**
 * The outbound pipeline of one outbox folder: each finished file is uploaded exactly once, then
 * archived; a file that cannot be sent goes to the error folder with a reason beside it.
 *
 * This module keeps the lifecycle (prerequisites, recovery, `once` cycles, `run` mode, stop) and
 * the work queue that drives each journal row to its end. The steps live beside it: `scanner`
 * (detection and claim), `sender` (checks, upload, reconciliation), `disposal` (sentDir, errorDir).
 */
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import PQueue from 'p-queue';
import type { MailboxTransport } from '../api/index.js';
import { DEFAULTS } from '../config/defaults.js';
import { EventBus, type PipelineEvents } from '../events/index.js';
import { ensureDirDurable, FileCalls, onLocalFilesystems, sameFilesystem, CrossFilesystemError } from '../files/index.js';
import { ALWAYS_HELD, OUTBOUND_UNFINISHED, OutboundJournal, type JournalStore, type MailboxLease } from '../journal/index.js';
import { TrailingWork } from '../work/index.js';
import { silentLogger, type Logger } from '../log.js';
import { Disposal } from './disposal.js';
import { OutboxScanner } from './scanner.js';
import { Sender } from './sender.js';
import {
  emptyResult,
  type OutboundCycleResult,
  type OutboundMailbox,
  type OutboxConfig,
  type OutboxContext,
  type TallyDetail,
} from './types.js';
import { codeOf, errorFields, TroubleLog } from '../errors/index.js';

export type { OutboundCycleResult, OutboundMailbox, OutboxConfig } from './types.js';

export interface OutboundPipelineOptions {
  readonly client: MailboxTransport;
  readonly journal: JournalStore;
  readonly mailbox: OutboundMailbox;
  readonly stateDir: string;
  readonly logger?: Logger;
  readonly now?: () => number;
  /** A pause that ends early, without an error, when `signal` aborts. */
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Where the pipeline reports progress (`outbound:*`); the daemon shares one bus among mailboxes. */
  readonly events?: EventBus<PipelineEvents>;
  /** The mailbox's lease in a shared journal; default `ALWAYS_HELD` (SQLite). */
  readonly lease?: MailboxLease;
  /** The longest an upload request may last (`OutboxContext.longestUploadMs`); default the API's call deadline. */
  readonly longestUploadMs?: number;
}

/** Files driven at once per upload slot (`outbox.concurrency`, as it adapts). */
const FILES_PER_UPLOAD_SLOT = 2;

/** The event each outbound counter is told by (the daemon's per-cycle record follows the same map). */
export const EVENT_OF = {
  claimed: 'outbound:claimed',
  uploaded: 'outbound:uploaded',
  archived: 'outbound:sent',
  rejected: 'outbound:rejected',
  failed: 'outbound:failed',
  deferred: 'outbound:deferred',
} as const;

function emitOutbound(
  events: EventBus<PipelineEvents>,
  mailbox: string,
  key: keyof typeof EVENT_OF,
  count: number,
  detail: TallyDetail,
): void {
  const name = EVENT_OF[key];
  if (name === 'outbound:sent')
    events.emit(name, { mailbox, count, bytes: detail.bytes ?? 0, ...(detail.item ? { item: detail.item } : {}) });
  else
    events.emit(name, {
      mailbox,
      count,
      ...(detail.reason !== undefined ? { reason: detail.reason } : {}),
      ...(detail.code !== undefined ? { code: detail.code } : {}),
      ...(detail.file !== undefined ? { file: detail.file } : {}),
    });
}

export class OutboundPipeline {
  private readonly ctx: OutboxContext;
  private readonly cfg: OutboxConfig;
  private readonly mailboxName: string;
  private readonly journal: OutboundJournal;
  private readonly now: () => number;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  private readonly scanner: OutboxScanner;
  private readonly sender: Sender;
  private readonly disposal: Disposal;
  private readonly queue: PQueue;
  private readonly queued = new Set<number>();
  /** Archives: they need no upload slot; cycles and stop wait for them. */
  private readonly trailing: TrailingWork;
  private result: OutboundCycleResult = emptyResult();
  private readonly events: EventBus<PipelineEvents>;
  private started = false;
  /**
   * The journal out of reach (its database down for an hour): the rescans' reads of the unfinished
   * rows and the files' drives fail every time, the rows stay as the journal has them, and the next
   * rescan to read them queues them again. Each is told when it starts and when it ends.
   */
  private readonly rowsTrouble: TroubleLog;
  private readonly drivesTrouble: TroubleLog;

  constructor(options: OutboundPipelineOptions) {
    this.cfg = options.mailbox.outbox;
    this.mailboxName = options.mailbox.name;
    this.journal = new OutboundJournal(options.journal);
    this.events = options.events ?? new EventBus<PipelineEvents>();
    this.now = options.now ?? Date.now;
    this.sleep = options.sleep ?? ((ms, signal) => delay(ms, undefined, signal ? { signal } : {}).catch(() => undefined));
    const mailboxId = options.mailbox.mailboxId;
    const processingDir = this.cfg.processingDir ?? path.join(options.stateDir, 'processing');
    let calls = FileCalls.POOL;
    const folders = [this.cfg.dir, processingDir, this.cfg.errorDir, ...(this.cfg.sentDir ? [this.cfg.sentDir] : [])];
    this.ctx = {
      get calls() {
        return calls;
      },
      refreshCalls: async () => {
        calls = FileCalls.of(await onLocalFilesystems(...folders));
      },
      journal: this.journal,
      cfg: this.cfg,
      mailboxId,
      processingDir,
      ...(options.mailbox.configFile ? { configFile: options.mailbox.configFile } : {}),
      logger: (options.logger ?? silentLogger).child({ mailboxId, direction: 'out', outbox: this.cfg.dir }),
      now: this.now,
      lease: options.lease ?? ALWAYS_HELD,
      longestUploadMs: options.longestUploadMs ?? DEFAULTS.api.timeouts.callMs,
      monotonic: () => performance.now(),
      tally: (key, n = 1, detail = {}) => {
        this.result[key] += n;
        if (key === 'archived') this.result.bytes += detail.bytes ?? 0;
        emitOutbound(this.events, options.mailbox.name, key, n, detail);
      },
    };
    this.trailing = new TrailingWork((err) => this.ctx.logger.error({ ...errorFields(err) }, 'outbound archive failed unexpectedly'));
    this.disposal = new Disposal(this.ctx);
    this.sender = new Sender(this.ctx, options.client, this.disposal);
    const trouble = (started: string, ended: string): TroubleLog =>
      new TroubleLog({ logger: this.ctx.logger, level: 'warn', started, ended, now: this.ctx.monotonic });
    this.rowsTrouble = trouble('outbox rows not queued: the journal cannot be read; the next scan tries again', 'outbox rows queued again');
    this.drivesTrouble = trouble(
      'outbound files wait: the journal cannot be used; the next scan queues them again',
      'outbound files go on again',
    );
    // The journal may be out of reach (a PostgreSQL restart): the rows stay, the next scan queues them.
    this.scanner = new OutboxScanner(this.ctx, this.disposal, (claimed) => {
      if (claimed) return this.enqueue(claimed);
      this.enqueueJournalWork().then(
        () => this.rowsTrouble.ok(),
        (err: unknown) => this.rowsTrouble.failed(err),
      );
    });
    // Files in progress: more than the uploads in flight (the Sender's own bound), so that the
    // next files' commits and checks are done by the time an upload slot frees.
    this.queue = new PQueue({ concurrency: FILES_PER_UPLOAD_SLOT * this.sender.uploads.limit });
    this.sender.uploads.follow(this.queue, FILES_PER_UPLOAD_SLOT);
  }

  /** Start-up checks: folders exist and are writable; processing on the outbox's filesystem. */
  async checkPrerequisites(): Promise<void> {
    const processingDir = this.ctx.processingDir;
    for (const d of [this.cfg.dir, this.cfg.errorDir, processingDir, ...(this.cfg.sentDir ? [this.cfg.sentDir] : [])])
      await ensureDirDurable(d);
    // Only gridsync writes in processing/: the claimed snapshots there are what gets sent.
    const st = await fs.promises.stat(processingDir);
    if (st.uid === process.getuid?.() && (st.mode & 0o077) !== 0) await fs.promises.chmod(processingDir, 0o700);
    if (!(await sameFilesystem(processingDir, this.cfg.dir))) {
      throw new CrossFilesystemError(
        `processing ${processingDir} and outbox ${this.cfg.dir} are on different filesystems: the claim would not be atomic; set outbox.processingDir to a folder on the outbox's filesystem`,
      );
    }
  }

  /** Finishes what a previous run left in an intermediate state (journal-driven). */
  async recover(): Promise<OutboundCycleResult> {
    await fs.promises.mkdir(this.ctx.processingDir, { recursive: true, mode: 0o700 });
    this.result = emptyResult();
    await this.ctx.refreshCalls();
    // Once started (a lease taken while running), the queue drives every row, claims included:
    // driving them here too would run two steps of one row at once.
    if (!this.started)
      for (const row of await this.journal.inStates(this.ctx.mailboxId, this.cfg.dir, ['claiming'])) await this.scanner.finishClaim(row);
    await this.enqueueJournalWork();
    await this.settled();
    return this.result;
  }

  /** `gridsync once`: rescan until nothing is still settling, then send everything and wait. */
  async runCycle(opts: { signal?: AbortSignal } = {}): Promise<OutboundCycleResult> {
    const mailbox = this.mailboxName;
    const started = this.now();
    this.events.emit('cycle:start', { mailbox, direction: 'out' });
    try {
      await this.cycle(opts);
    } catch (err) {
      this.events.emit('cycle:end', {
        mailbox,
        direction: 'out',
        durationMs: this.now() - started,
        counts: { ...this.result },
        code: codeOf(err),
      });
      throw err;
    }
    this.events.emit('cycle:end', { mailbox, direction: 'out', durationMs: this.now() - started, counts: { ...this.result } });
    return this.result;
  }

  private async cycle(opts: { signal?: AbortSignal }): Promise<void> {
    this.result = emptyResult();
    this.scanner.heldLocally.clear();
    await fs.promises.mkdir(this.ctx.processingDir, { recursive: true, mode: 0o700 });
    // A file still growing after a few stability windows is left for the next cycle. What counts
    // is the time spent waiting for files to settle, not the scans: on a slow machine the claims of a
    // big drop used it up and left files behind that were only young, not growing.
    const patience = Math.max(3 * this.cfg.stableMs, 1000);
    for (let waited = 0; ;) {
      if (opts.signal?.aborted) break;
      const wait = await this.scanner.scan();
      if (wait === 0 || waited >= patience) break;
      const ms = Math.min(wait, patience - waited) + 5;
      // A stop or a lost lease must not wait out a writer's pause (up to stableMs).
      await this.sleep(ms, opts.signal);
      waited += ms;
    }
    // Stopped: the rows claimed so far are the next run's (or the new lease holder's) to send.
    if (!opts.signal?.aborted) await this.enqueueJournalWork();
    await this.settled();
  }

  /** `gridsync run`: watch the folder, rescan periodically, send continuously. */
  async start(): Promise<void> {
    this.started = true;
    await fs.promises.mkdir(this.ctx.processingDir, { recursive: true, mode: 0o700 });
    this.queue.start();
    this.scanner.start();
  }

  /** Stop taking work; in-flight uploads finish (up to `deadlineMs`), the rest resumes next start. */
  async stop(deadlineMs: number = DEFAULTS.shutdownTimeoutMs): Promise<void> {
    const scanned = this.scanner.stop();
    this.queue.pause();
    this.queue.clear();
    let deadline: NodeJS.Timeout | undefined;
    const drained = this.queue.onPendingZero().then(async () => {
      await this.trailing.drain();
    });
    await Promise.race([drained, new Promise((r) => (deadline = setTimeout(r, deadlineMs)))]);
    clearTimeout(deadline);
    await scanned;
  }

  /** Cumulative counters since the last runCycle/recover (the daemon reads them for metrics). */
  get counters(): Readonly<OutboundCycleResult> {
    return this.result;
  }

  /** Files held back in the last cycle by a local condition (the outbox's permissions), by row id, with the reason. */
  get heldLocally(): ReadonlyMap<number, string> {
    return this.scanner.heldLocally;
  }

  get queueDepth(): number {
    return this.queue.size + this.queue.pending + this.trailing.size;
  }

  /** Queues every row that has work left (claimed, uploading, uploaded, erroring). */
  private async enqueueJournalWork(): Promise<void> {
    const rows = await this.journal.inStates(this.ctx.mailboxId, this.cfg.dir, OUTBOUND_UNFINISHED);
    this.enqueue(rows.map((r) => r.id));
  }

  /** Queues these rows, each unless already queued; `drive` takes each from whatever state it is in. */
  private enqueue(ids: readonly number[]): void {
    for (const id of ids) {
      if (this.queued.has(id)) continue;
      this.queued.add(id);
      void this.queue
        .add(async () => {
          let after: Promise<void> | undefined;
          try {
            after = (await this.drive(id)).after;
            this.drivesTrouble.ok();
          } finally {
            // A row stays queued until its archive is done too: a rescan must not drive it twice.
            if (after) this.trailing.add(after.finally(() => this.queued.delete(id)));
            else this.queued.delete(id);
          }
        })
        .catch((err: unknown) => {
          // An expected, coded failure: the row stays as the journal has it, as after a crash.
          const code = codeOf(err);
          if (code === 'JOURNAL_UNAVAILABLE') this.drivesTrouble.failed(err, { id });
          else if (code === 'JOURNAL_LEASE_LOST') this.ctx.logger.debug({ id, code }, 'outbound file left to the mailbox lease holder');
          // The daemon stops for it and says so once (daemon/fatal-stop.ts).
          else if (code === 'JOURNAL_SCHEMA_DAMAGED') this.ctx.logger.debug({ id, code }, 'outbound file left: the journal is damaged');
          else this.ctx.logger.error({ id, ...errorFields(err) }, 'outbound task failed unexpectedly');
        });
    }
  }

  /** Resolves once the queue is idle and no archive is under way. */
  private async settled(): Promise<void> {
    await this.queue.onIdle();
    while (this.trailing.size > 0) {
      await this.trailing.drain();
      await this.queue.onIdle();
    }
  }

  /**
   * Drives one file from its journal state to archived or in_error, as far as it goes now. The
   * archive (local file work and its commit) is returned as `after`: it needs no upload slot.
   */
  private async drive(id: number): Promise<{ after?: Promise<void> }> {
    // Not the lease holder (any more): the holder drives the row.
    if (!this.ctx.lease.mayAct()) return {};
    const started = this.now();
    let row = await this.journal.get(id);
    if (row?.state === 'claiming') {
      await this.scanner.finishClaim(row);
      row = await this.journal.get(id);
    }
    if (row?.state === 'claimed') {
      const rejection = await this.sender.check(row);
      if (rejection) {
        await this.sender.refuse(row, rejection);
        return {};
      }
    }
    if (row?.state === 'claimed' || row?.state === 'uploading') {
      if (!(await this.sender.upload(row))) return {};
      row = await this.journal.get(id);
    }
    if (row?.state === 'uploaded') {
      const uploaded = row;
      return {
        after: this.disposal.archive(uploaded).then(() => {
          this.ctx.logger.info(
            {
              file: uploaded.file_name,
              parcelId: uploaded.parcel_id,
              bytes: uploaded.bytes,
              durationMs: this.now() - started,
              attempts: uploaded.attempts,
            },
            'file sent',
          );
        }),
      };
    }
    if (row?.state === 'erroring')
      await this.disposal.toError(row, { reason: row.last_error ?? 'unknown', errorCode: row.error_code, httpStatus: row.http_status });
    return {};
  }
}
