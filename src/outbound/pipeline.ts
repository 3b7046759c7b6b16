/**
 * The outbound pipeline of one outbox folder: each finished file is uploaded exactly once, then
 * archived; a file that cannot be sent goes to the error folder with a reason beside it
 * (DESIGN.md "Outbound pipeline").
 *
 * Detection is a rescan of the folder checked against the journal; chokidar events only make the
 * rescan come sooner (they are lost on network shares and while the daemon is down).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import chokidar, { type FSWatcher } from 'chokidar';
import PQueue from 'p-queue';
import { GridApiError, GridTransportError, mayHaveReachedService, UploadOutcomeUnknownError, type MailboxTransport } from '../api/index.js';
import { ensureDirDurable, exists, fsyncDir, fsyncFile, sameFilesystem } from '../files/durable.js';
import { renderTemplate, resolveInside, sanitizeFileName, uniqueVariant } from '../files/naming.js';
import type { Journal } from '../journal/db.js';
import { crashPoint } from '../journal/crash-points.js';
import { OutboundJournal, type ErrorDecision, type OutboundRow } from '../journal/outbound.js';
import { silentLogger, type Logger } from '../log.js';
import { StabilityTracker, ignoreMatcher, validateEnvelope } from './checks.js';

export interface OutboxConfig {
  readonly dir: string;
  readonly sentDir?: string;
  readonly archive: 'move' | 'delete';
  /** Name in sentDir: `{fileName}`, `{parcelId}`, `{date}`, `{mailboxId}`. */
  readonly sentTemplate: string;
  readonly errorDir: string;
  readonly stableMs: number;
  readonly readiness: 'stable' | 'marker';
  readonly markerSuffix: string;
  readonly ignore: readonly string[];
  readonly usePolling: boolean;
  readonly rescanMs: number;
  readonly concurrency: number;
  readonly maxAttempts: number;
  readonly gridIdFrom?: number;
  readonly gridIdTo?: number;
  readonly validateEnvelope: boolean;
  readonly maxBytes?: number;
  readonly duplicates: 'reject' | 'allow';
  readonly duplicateWindowMs: number;
  /** Where claimed files wait; must be on the outbox's filesystem. Default `<stateDir>/processing`. */
  readonly processingDir?: string;
  /** Reconciliation looks this far before the attempt's start (service clock skew). Default 10 min. */
  readonly reconcileSlackMs?: number;
}

export interface OutboundMailbox {
  readonly mailboxId: number;
  readonly name: string;
  readonly outbox: OutboxConfig;
}

export interface OutboundPipelineOptions {
  readonly client: MailboxTransport;
  readonly journal: Journal;
  readonly mailbox: OutboundMailbox;
  readonly stateDir: string;
  readonly logger?: Logger;
  readonly now?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
}

export interface OutboundCycleResult {
  claimed: number;
  uploaded: number;
  archived: number;
  rejected: number;
  failed: number;
  deferred: number;
  /** Bytes of the files archived. */
  bytes: number;
}

/** Files above this size are checked at their first ISA/UNB and last IEA/UNZ only. */
const FULL_VALIDATION_LIMIT = 16 * 1024 * 1024;
const DISK_ERRORS = new Set(['ENOSPC', 'EDQUOT', 'EACCES', 'EPERM', 'EROFS', 'EBUSY']);
/** Files claimed together in one scan step. */
const CLAIM_BATCH = 32;

export class OutboundPipeline {
  private readonly journal: OutboundJournal;
  private readonly cfg: OutboxConfig;
  private readonly mailboxId: number;
  private readonly logger: Logger;
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly processingDir: string;
  private readonly isIgnored: (name: string) => boolean;
  private readonly stability: StabilityTracker;
  private readonly queue: PQueue;
  private readonly queued = new Set<number>();
  private readonly reportedOdd = new Set<string>();
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private scanning: Promise<number> | undefined;
  private rescanSoon = false;
  private running = false;
  private result: OutboundCycleResult = emptyResult();

  constructor(private readonly options: OutboundPipelineOptions) {
    this.journal = new OutboundJournal(options.journal);
    this.cfg = options.mailbox.outbox;
    this.mailboxId = options.mailbox.mailboxId;
    this.logger = (options.logger ?? silentLogger).child({ mailboxId: this.mailboxId, direction: 'out', outbox: this.cfg.dir });
    this.now = options.now ?? Date.now;
    this.sleep = options.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
    this.processingDir = options.mailbox.outbox.processingDir ?? path.join(options.stateDir, 'processing');
    this.isIgnored = ignoreMatcher([...this.cfg.ignore, `*${this.cfg.markerSuffix}`, '*.error.json']);
    this.stability = new StabilityTracker(this.cfg.stableMs);
    this.queue = new PQueue({ concurrency: Math.max(1, this.cfg.concurrency) });
  }

  /** Start-up checks: folders exist and are writable; processing on the outbox's filesystem. */
  async checkPrerequisites(): Promise<void> {
    for (const d of [this.cfg.dir, this.cfg.errorDir, this.processingDir, ...(this.cfg.sentDir ? [this.cfg.sentDir] : [])]) await ensureDirDurable(d);
    if (!(await sameFilesystem(this.processingDir, this.cfg.dir))) {
      throw new Error(`processing ${this.processingDir} and outbox ${this.cfg.dir} are on different filesystems: the claim would not be atomic; set outbox.processingDir to a folder on the outbox's filesystem`);
    }
  }

  /** Finishes what a previous run left in an intermediate state (journal-driven). */
  async recover(): Promise<OutboundCycleResult> {
    await fs.promises.mkdir(this.processingDir, { recursive: true });
    this.result = emptyResult();
    for (const row of this.journal.inStates(this.mailboxId, this.cfg.dir, ['claiming'])) await this.finishClaim(row);
    this.enqueueJournalWork();
    await this.queue.onIdle();
    return this.result;
  }

  /** `gridsync once`: rescan until nothing is still settling, then send everything and wait. */
  async runCycle(opts: { signal?: AbortSignal } = {}): Promise<OutboundCycleResult> {
    this.result = emptyResult();
    await fs.promises.mkdir(this.processingDir, { recursive: true });
    // A file still growing after a few stability windows is left for the next cycle.
    const deadline = this.now() + Math.max(3 * this.cfg.stableMs, 1000);
    for (;;) {
      if (opts.signal?.aborted) break;
      const wait = await this.scan();
      if (wait === 0 || this.now() >= deadline) break;
      await this.sleep(Math.min(wait, Math.max(0, deadline - this.now())) + 5);
    }
    this.enqueueJournalWork();
    await this.queue.onIdle();
    return this.result;
  }

  /** `gridsync run`: watch the folder, rescan periodically, send continuously. */
  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    await fs.promises.mkdir(this.processingDir, { recursive: true });
    this.watcher = chokidar.watch(this.cfg.dir, {
      depth: 0,
      ignoreInitial: true,
      usePolling: this.cfg.usePolling,
      // chokidar 5 also asks about the root itself: never ignore it, or nothing is watched.
      ignored: (p: string) => path.resolve(p) !== path.resolve(this.cfg.dir) && this.isIgnored(path.basename(p)),
    });
    this.watcher.on('add', () => this.kick());
    this.watcher.on('change', () => this.kick());
    this.watcher.on('error', (err) => this.logger.warn({ err: (err as Error).message }, 'outbox watcher error; the periodic rescan continues'));
    this.kick();
  }

  /** Stop taking work; in-flight uploads finish (up to `deadlineMs`), the rest resumes next start. */
  async stop(deadlineMs = 30_000): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.watcher?.close();
    this.watcher = undefined;
    this.queue.pause();
    this.queue.clear();
    let deadline: NodeJS.Timeout | undefined;
    await Promise.race([this.queue.onPendingZero(), new Promise((r) => (deadline = setTimeout(r, deadlineMs)))]);
    clearTimeout(deadline);
    await this.scanning;
  }

  /** Cumulative counters since the last runCycle/recover (the daemon reads them for metrics). */
  get counters(): Readonly<OutboundCycleResult> {
    return this.result;
  }

  get queueDepth(): number {
    return this.queue.size + this.queue.pending;
  }

  private kick(delayMs = 0): void {
    if (!this.running) return;
    if (this.scanning) {
      this.rescanSoon = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.scanAndSchedule();
    }, delayMs);
  }

  private async scanAndSchedule(): Promise<void> {
    let wait = this.cfg.rescanMs;
    try {
      const w = await this.scan();
      this.enqueueJournalWork();
      if (w > 0) wait = Math.min(wait, w + 5);
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'outbox scan failed; retrying');
      wait = Math.min(wait, 5000);
    }
    if (this.rescanSoon) {
      this.rescanSoon = false;
      wait = 0;
    }
    this.kick(wait);
  }

  /** Lists the folder, claims ready files; returns ms until a settling file should be looked at again (0 = none). */
  private async scan(): Promise<number> {
    const run = (async () => {
      let entries: fs.Dirent[];
      try {
        entries = await fs.promises.readdir(this.cfg.dir, { withFileTypes: true });
      } catch (err) {
        this.logger.error({ err: (err as Error).message }, 'cannot list the outbox folder');
        return this.cfg.rescanMs;
      }
      const names = new Set(entries.map((e) => e.name));
      this.stability.retainOnly(names);
      let wait = 0;
      const readyFiles: [string, string][] = [];
      for (const e of entries) {
        if (this.isIgnored(e.name)) continue;
        if (!e.isFile()) {
          // Symlinks are never followed, FIFOs never opened, directories left alone: report once.
          if (!this.reportedOdd.has(e.name)) {
            this.reportedOdd.add(e.name);
            this.logger.warn({ file: e.name }, 'outbox entry is not a regular file; left alone');
          }
          continue;
        }
        const source = path.join(this.cfg.dir, e.name);
        let ready: number;
        if (this.cfg.readiness === 'marker') {
          ready = names.has(e.name + this.cfg.markerSuffix) ? 0 : -1;
        } else {
          let st: fs.Stats;
          try {
            st = await fs.promises.lstat(source);
          } catch {
            continue;
          }
          ready = this.stability.observe(e.name, { size: st.size, mtimeMs: st.mtimeMs }, this.now());
        }
        if (ready > 0) wait = wait === 0 ? ready : Math.min(wait, ready);
        if (ready !== 0) continue;
        this.stability.forget(e.name);
        readyFiles.push([e.name, source]);
      }
      // Claims run in groups so that their journal commits share one fsync (group commit), but
      // not all at once: each claim opens its file to hash it, and a drop of thousands of files
      // must not run into the descriptor limit.
      for (let i = 0; i < readyFiles.length; i += CLAIM_BATCH) {
        await Promise.all(readyFiles.slice(i, i + CLAIM_BATCH).map(([name, src]) => this.claim(name, src)));
      }
      return wait;
    })();
    this.scanning = run;
    try {
      return await run;
    } finally {
      this.scanning = undefined;
    }
  }

  /** claiming (journal) → rename into processing → claimed (size, sha256). */
  private async claim(fileName: string, source: string): Promise<void> {
    let row: OutboundRow;
    try {
      row = await this.journal.markClaiming(this.mailboxId, this.cfg.dir, fileName, source, this.processingDir);
    } catch (err) {
      this.logger.error({ file: fileName, err: (err as Error).message }, 'cannot journal the claim; will retry');
      return;
    }
    crashPoint('out.claiming');
    await this.finishClaim(row);
  }

  private async finishClaim(row: OutboundRow): Promise<void> {
    const processing = row.processing_path as string;
    try {
      if (await exists(row.source_path)) {
        await fs.promises.rename(row.source_path, processing);
        crashPoint('out.claim-renamed');
        await fsyncDir(path.dirname(processing));
        await fsyncDir(path.dirname(row.source_path));
        if (this.cfg.readiness === 'marker') await fs.promises.rm(row.source_path + this.cfg.markerSuffix, { force: true });
      } else if (!(await exists(processing))) {
        this.result.failed++;
        await this.toError(row, { reason: 'the file vanished from the outbox before it could be claimed' });
        return;
      }
      const { bytes, sha256 } = await hashFile(processing);
      await this.journal.markClaimed(row.id, bytes, sha256);
      this.result.claimed++;
      crashPoint('out.claimed');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? '';
      if (code === 'EACCES' || code === 'EPERM') {
        this.result.failed++;
        await this.toError(row, { reason: `unreadable: ${(err as Error).message}` });
        return;
      }
      this.logger.warn({ file: row.file_name, err: (err as Error).message }, 'claim interrupted; will finish it later');
      this.journal.noteError(row.id, (err as Error).message);
    }
  }

  /** Queues every row that has work left (claimed, uploading, uploaded, erroring). */
  private enqueueJournalWork(): void {
    for (const row of this.journal.inStates(this.mailboxId, this.cfg.dir, ['claiming', 'claimed', 'uploading', 'uploaded', 'erroring'])) {
      if (this.queued.has(row.id)) continue;
      this.queued.add(row.id);
      void this.queue
        .add(async () => {
          try {
            await this.drive(row.id);
          } finally {
            this.queued.delete(row.id);
          }
        })
        .catch((err: unknown) => this.logger.error({ id: row.id, err: (err as Error).message }, 'outbound task failed unexpectedly'));
    }
  }

  /** Drives one file from its journal state to archived or in_error, as far as it goes now. */
  private async drive(id: number): Promise<void> {
    const started = this.now();
    let row = this.journal.get(id);
    if (row?.state === 'claiming') {
      await this.finishClaim(row);
      row = this.journal.get(id);
    }
    if (row?.state === 'claimed') {
      const rejection = await this.check(row);
      if (rejection) {
        this.result.rejected++;
        await this.toError(row, rejection);
        return;
      }
    }
    if (row?.state === 'claimed' || row?.state === 'uploading') {
      if (!(await this.upload(row))) return;
      row = this.journal.get(id);
    }
    if (row?.state === 'uploaded') {
      await this.archive(row);
      this.logger.info({ file: row.file_name, parcelId: row.parcel_id, bytes: row.bytes, durationMs: this.now() - started, attempts: row.attempts }, 'file sent');
      return;
    }
    if (row?.state === 'erroring') await this.toError(row, { reason: row.last_error ?? 'unknown', errorCode: row.error_code, httpStatus: row.http_status });
  }

  /** Optional checks before sending: empty, size, envelope, duplicate content. */
  private async check(row: OutboundRow): Promise<ErrorDecision | undefined> {
    const bytes = row.bytes ?? 0;
    if (bytes === 0) return { reason: 'empty file' };
    if (this.cfg.maxBytes !== undefined && bytes > this.cfg.maxBytes) return { reason: `too large: ${bytes} bytes, the limit is ${this.cfg.maxBytes}` };
    if (this.cfg.validateEnvelope) {
      const verdict = validateEnvelope(await readForValidation(row.processing_path as string, bytes));
      if (!verdict.ok) return { reason: `invalid interchange: ${verdict.reason}` };
    }
    if (this.cfg.duplicates === 'reject' && row.sha256) {
      const dup = this.journal.duplicateOf(row.id, row.sha256, this.now() - this.cfg.duplicateWindowMs);
      if (dup) return { reason: `duplicate content: the same bytes were sent as ${dup.file_name}${dup.parcel_id ? ` (parcel ${dup.parcel_id})` : ''}` };
    }
    return undefined;
  }

  /**
   * claimed/uploading → uploaded. A row found in `uploading` may have reached the service before a
   * crash or an ambiguous failure: reconcile with the outbox list before sending again.
   * Returns true when the row is now uploaded.
   */
  private async upload(row: OutboundRow): Promise<boolean> {
    try {
      if (row.state === 'uploading') {
        let found: number | undefined;
        try {
          found = await this.reconcile(row);
        } catch (err) {
          // Without an answer from the outbox list nothing is known: stay `uploading` and ask again
          // next pass — never fall through to a send (that is how a duplicate would happen).
          this.journal.noteError(row.id, `reconciliation failed: ${(err as Error).message}`);
          this.result.deferred++;
          this.logger.warn({ file: row.file_name, err: (err as Error).message }, 'cannot reconcile the unknown upload yet; will ask the outbox list again');
          return false;
        }
        if (found !== undefined) {
          await this.journal.markUploaded(row.id, found, 'reconciled');
          this.logger.warn({ file: row.file_name, parcelId: found }, 'upload outcome was unknown; found the parcel on the service and adopted it (no second send)');
          this.result.uploaded++;
          return true;
        }
        if (row.attempts >= this.cfg.maxAttempts) {
          await this.toError(row, { reason: `gave up after ${row.attempts} attempts: ${row.last_error ?? 'unknown error'}`, errorCode: row.error_code, httpStatus: row.http_status });
          this.result.failed++;
          return false;
        }
      }
      const attemptStart = this.now();
      await this.journal.markUploading(row.id, attemptStart);
      crashPoint('out.uploading');
      const { parcelId } = await this.options.client.uploadParcel(
        row.processing_path as string,
        {
          fileName: row.file_name,
          mailboxId: this.mailboxId,
          ...(this.cfg.gridIdFrom !== undefined ? { gridIdFrom: this.cfg.gridIdFrom } : {}),
          ...(this.cfg.gridIdTo !== undefined ? { gridIdTo: this.cfg.gridIdTo } : {}),
        },
        { onBodySent: () => crashPoint('out.request-sent') },
      );
      crashPoint('out.response-received');
      await this.journal.markUploaded(row.id, parcelId, 'uploaded');
      this.result.uploaded++;
      crashPoint('out.uploaded');
      return true;
    } catch (err) {
      return this.uploadFailed(row.id, err);
    }
  }

  private async uploadFailed(id: number, err: unknown): Promise<false> {
    const row = this.journal.get(id) as OutboundRow;
    const reason = (err as Error).message;
    if (err instanceof UploadOutcomeUnknownError) {
      // Stays `uploading`: the next pass reconciles before it sends again.
      this.journal.noteError(id, reason);
      this.result.deferred++;
      this.logger.warn({ file: row.file_name, err: reason }, 'upload outcome unknown; will reconcile with the outbox list before any resend');
      return false;
    }
    if (err instanceof GridApiError && !err.retryable) {
      this.result.failed++;
      await this.toError(row, { reason: `rejected by the service: ${err.serviceMessage || reason}`, errorCode: err.errorCode, httpStatus: err.httpStatus });
      return false;
    }
    // Back to `claimed` (a plain resend is safe) only when the request provably never reached the
    // service: a 429, or no connection at all. Anything else — an unreadable answer, an error
    // after the request went out — keeps `uploading`, so the next pass reconciles first.
    const notSent = !mayHaveReachedService(err);
    if (row.state === 'uploading') {
      if (!notSent) {
        this.journal.noteError(id, reason);
        this.result.deferred++;
        this.logger.warn({ file: row.file_name, err: reason }, 'upload failed after the request may have reached the service; will reconcile before any resend');
        return false;
      }
      await this.journal.markNotSent(id, reason);
    }
    // A service that is down is not the file's fault: only answered retryable errors count towards maxAttempts.
    const counted = err instanceof GridApiError;
    if (counted && row.attempts >= this.cfg.maxAttempts) {
      this.result.failed++;
      await this.toError(this.journal.get(id) as OutboundRow, { reason: `gave up after ${row.attempts} attempts: ${reason}`, errorCode: (err as GridApiError).errorCode, httpStatus: (err as GridApiError).httpStatus });
      return false;
    }
    this.result.deferred++;
    this.logger.warn({ file: row.file_name, err: reason, transport: err instanceof GridTransportError }, 'upload failed; will retry');
    return false;
  }

  /** A parcel with our file name and byte count created since the attempt started, not yet adopted. */
  private async reconcile(row: OutboundRow): Promise<number | undefined> {
    const since = (row.attempt_started_at ?? row.created_at) - (this.cfg.reconcileSlackMs ?? 10 * 60_000);
    for await (const parcel of this.options.client.outboxParcels({ mailboxId: this.mailboxId, since: new Date(since).toISOString() })) {
      if (parcel.fileName === row.file_name && parcel.bytes === row.bytes && !this.journal.isAdopted(parcel.parcelId)) return parcel.parcelId;
    }
    return undefined;
  }

  /** uploaded → archived: move to sentDir (or delete), journalled after the rename. */
  private async archive(row: OutboundRow): Promise<void> {
    const processing = row.processing_path as string;
    let finalPath: string | null = row.final_path;
    try {
      if (await exists(processing)) {
        if (this.cfg.archive === 'delete' || !this.cfg.sentDir) {
          await fs.promises.rm(processing, { force: true });
          finalPath = null;
        } else {
          finalPath = await this.freeName(this.cfg.sentDir, renderTemplate(this.cfg.sentTemplate, {
            fileName: sanitizeFileName(row.file_name, `file-${row.id}`),
            parcelId: row.parcel_id,
            date: new Date(this.now()).toISOString().slice(0, 10),
            mailboxId: this.mailboxId,
          }, `file-${row.id}`), String(row.parcel_id));
          await moveDurable(processing, finalPath);
        }
        crashPoint('out.archive-renamed');
        await fsyncDir(path.dirname(processing));
      }
      await this.journal.markArchived(row.id, finalPath);
      this.result.archived++;
      this.result.bytes += row.bytes ?? 0;
      crashPoint('out.archived');
    } catch (err) {
      this.journal.noteError(row.id, `archive failed: ${(err as Error).message}`);
      this.result.deferred++;
      if (!DISK_ERRORS.has((err as NodeJS.ErrnoException).code ?? '')) throw err;
      this.logger.warn({ file: row.file_name, err: (err as Error).message }, 'cannot archive yet; will retry');
    }
  }

  /** → erroring (reason journalled) → file and `<name>.error.json` in errorDir → in_error. */
  private async toError(row: OutboundRow, d: ErrorDecision): Promise<void> {
    if (row.state !== 'erroring') await this.journal.markErroring(row.id, d);
    const processing = row.processing_path as string;
    let finalPath: string | null = null;
    try {
      await ensureDirDurable(this.cfg.errorDir);
      const source = (await exists(processing)) ? processing : row.state === 'claiming' && (await exists(row.source_path)) ? row.source_path : null;
      const name = sanitizeFileName(row.file_name, `file-${row.id}`);
      finalPath = source ? await this.freeName(this.cfg.errorDir, name, String(row.id)) : path.join(this.cfg.errorDir, name);
      const current = this.journal.get(row.id) as OutboundRow;
      const report = {
        file: row.file_name,
        reason: d.reason,
        errorCode: d.errorCode ?? null,
        httpStatus: d.httpStatus ?? null,
        attempts: current.attempts,
        bytes: current.bytes,
        sha256: current.sha256,
        claimedAt: new Date(current.created_at).toISOString(),
        failedAt: new Date(this.now()).toISOString(),
        mailboxId: this.mailboxId,
        journalId: row.id,
        requeue: `gridsync requeue ${finalPath}`,
      };
      const reportPath = `${finalPath}.error.json`;
      await fs.promises.writeFile(reportPath, `${JSON.stringify(report, null, 2)}\n`);
      await fsyncFile(reportPath);
      if (source) await moveDurable(source, finalPath);
      await fsyncDir(this.cfg.errorDir);
      await this.journal.markInError(row.id, source ? finalPath : null);
      this.logger.error({ file: row.file_name, reason: d.reason, errorCode: d.errorCode ?? undefined, httpStatus: d.httpStatus ?? undefined, errorFile: finalPath }, 'file moved to the error folder');
    } catch (err) {
      this.journal.noteError(row.id, `cannot move to the error folder: ${(err as Error).message}`);
      this.logger.warn({ file: row.file_name, err: (err as Error).message }, 'cannot move the file to the error folder yet; will retry');
    }
  }

  /** A name in `dir` not taken by a file or a report: the name itself, else its unique variant. */
  private async freeName(dir: string, rel: string, tag: string): Promise<string> {
    let candidate = resolveInside(dir, rel);
    if (!(await exists(candidate)) && !(await exists(`${candidate}.error.json`))) return candidate;
    for (let n = 1; ; n++) {
      candidate = resolveInside(dir, path.join(path.dirname(rel), uniqueVariant(path.basename(rel), n === 1 ? tag : `${tag}-${n}`)));
      if (!(await exists(candidate)) && !(await exists(`${candidate}.error.json`))) return candidate;
    }
  }
}

function emptyResult(): OutboundCycleResult {
  return { claimed: 0, uploaded: 0, archived: 0, rejected: 0, failed: 0, deferred: 0, bytes: 0 };
}

async function hashFile(file: string): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of fs.createReadStream(file)) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { bytes, sha256: hash.digest('hex') };
}

/** The text the envelope check reads: the whole file, or its head and tail when large. */
async function readForValidation(file: string, bytes: number): Promise<string> {
  if (bytes <= FULL_VALIDATION_LIMIT) return fs.promises.readFile(file, 'latin1');
  const fh = await fs.promises.open(file, 'r');
  try {
    const head = Buffer.alloc(64 * 1024);
    const tail = Buffer.alloc(64 * 1024);
    await fh.read(head, 0, head.length, 0);
    await fh.read(tail, 0, tail.length, bytes - tail.length);
    const h = head.toString('latin1');
    const seg = h.startsWith('ISA') ? h[105] ?? '~' : "'";
    // Keep whole segments: the first interchange's header and the last one's trailer.
    return h.slice(0, h.indexOf(seg, 200) + 1) + tail.toString('latin1').slice(tail.toString('latin1').lastIndexOf(h.startsWith('ISA') ? `${seg}IEA` : `${seg}UNZ`) + 1);
  } finally {
    await fh.close();
  }
}

/** rename, or copy + fsync + unlink across filesystems (sentDir or errorDir on another disk). */
async function moveDurable(from: string, to: string): Promise<void> {
  await ensureDirDurable(path.dirname(to));
  try {
    await fs.promises.rename(from, to);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
    await fs.promises.copyFile(from, to);
    await fsyncFile(to);
    await fs.promises.rm(from, { force: true });
  }
  await fsyncDir(path.dirname(to));
}
