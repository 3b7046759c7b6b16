/**
 * The inbound pipeline of one mailbox: pending inbox → local inbox folder, exactly once per
 * delivery, confirmed only after the file is durably placed (docs/architecture.md#inbound-lifecycle).
 *
 * Work comes from the journal first (every row in an intermediate state, by parcel id) and from the
 * pending list second: on some service versions a downloaded parcel leaves the pending list before
 * it is confirmed, so the list is a hint of new work, never the truth.
 */
import fs from 'node:fs';
import path from 'node:path';
import PQueue from 'p-queue';
import {
  ContentIntegrityError,
  GridApiError,
  GridError,
  GridResponseError,
  type MailboxTransport,
  type UnreadableParcel,
} from '../api/index.js';
import {
  createExclusive,
  ensureDirDurable,
  FileCalls,
  freeBytes,
  fsyncDir,
  onLocalFilesystems,
  openDirInside,
  renderTemplate,
  resolveInside,
  sameFilesystem,
  sanitizeFileName,
  uniqueVariant,
  type DirHandle,
  CrossFilesystemError,
} from '../files/index.js';
import type { Journal } from '../journal/index.js';
import { crashPoint } from '../journal/index.js';
import { DEFAULTS } from '../config/defaults.js';
import type { InboxSettings } from '../config/index.js';
import { EventBus, type DeliveredItem, type PipelineEvents } from '../events/index.js';
import { errorFields, GridsyncError } from '../errors/index.js';
import { InboundJournal, type InboundRow } from '../journal/index.js';
import { StagingFile } from './staging-file.js';
import { silentLogger, type Logger } from '../log.js';
import { PartnerNames } from './partner-names.js';

/** The inbox's config section as the schema gives it (the schema is the one source of its keys). */
export type InboxConfig = Readonly<Omit<InboxSettings, 'group'>> & {
  /** Numeric gid (config resolves group names). */
  readonly gid?: number;
};

export interface InboundMailbox {
  readonly mailboxId: number;
  readonly name: string;
  readonly inbox: InboxConfig;
}

export interface InboundPipelineOptions {
  readonly client: MailboxTransport;
  readonly journal: Journal;
  readonly mailbox: InboundMailbox;
  readonly stateDir: string;
  readonly logger?: Logger;
  readonly now?: () => number;
  /** Where the pipeline reports progress (`inbound:*`); the daemon shares one bus among mailboxes. */
  readonly events?: EventBus<PipelineEvents>;
  /** `{partner}` names; the daemon shares one (and its cache) among mailboxes. Default: asks `client`. */
  readonly partnerNames?: PartnerNames;
}

export interface InboundCycleResult {
  listed: number;
  placed: number;
  confirmed: number;
  failed: number;
  redelivered: number;
  /** Parcels left for a later cycle (disk full, inbox not writable, service errors). */
  deferred: number;
  /** Listed parcels that cannot be acted on (an id above 2^53, no id): left on the service. */
  unreadable: number;
  /** Bytes of the parcels confirmed in this cycle. */
  bytes: number;
}

/** A local condition (disk full, folder unwritable) stops this parcel for now; the service keeps it. */
class DeferError extends GridsyncError {
  readonly code = 'INBOUND_DEFERRED';
}

const DISK_ERRORS = new Set(['ENOSPC', 'EDQUOT', 'EACCES', 'EPERM', 'EROFS']);

export class InboundPipeline {
  private readonly journal: InboundJournal;
  private readonly logger: Logger;
  private readonly now: () => number;
  private readonly stagingDir: string;
  private readonly inbox: InboxConfig;
  private readonly mailboxId: number;
  /** Parcels being driven right now: with company, their transitions may linger (group commit). */
  private active = 0;
  /** Confirmations whose journal commit is still under way (see processParcel). */
  private readonly trailing = new Set<Promise<void>>();
  /** Final paths taken by parcels in flight in this process, until confirmed or given up. */
  private readonly inFlightPaths = new Set<string>();
  /** Final paths of the journal's staged/placed rows when the cycle started: a new parcel must not take one. */
  private reserved = new Set<string>();
  /** Cheap file calls on this thread when staging and inbox are on local filesystems (files/calls). */
  private calls = FileCalls.POOL;
  /** The inbox root, held open for one cycle (most templates place into the root). */
  private root: Promise<DirHandle> | undefined;
  /**
   * Free bytes in staging as last measured, less the declared size of every download started
   * since: one statfs per cycle instead of one per parcel (measured again when it runs short).
   */
  private spaceLeft: number | undefined;
  private current: { total: number; totalBytes: number; result: Readonly<InboundCycleResult> } | undefined;

  /** The cycle in progress or last run: parcels it took on and how far it got (the CLI's progress line). */
  get progress(): { total: number; totalBytes: number; result: Readonly<InboundCycleResult> } | undefined {
    return this.current;
  }

  /** Why the last parcel was deferred (the daemon reports it when deliveries stop). */
  lastDeferReason: string | undefined;
  private readonly events: EventBus<PipelineEvents>;
  private readonly partners: PartnerNames;
  /** Only a template that uses `{partner}` asks the service for names. */
  private readonly usesPartner: boolean;
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
    this.stagingDir = options.mailbox.inbox.stagingDir ?? path.join(options.stateDir, 'staging');
    this.partners =
      options.partnerNames ?? new PartnerNames({ lookup: options.client.partnerName?.bind(options.client), logger: this.logger });
    this.usesPartner = this.inbox.nameTemplate.includes('{partner}');
  }

  /** Adds to the cycle's counters and tells the subscribers (`inbound:*` events). */
  private tally(
    result: InboundCycleResult,
    key: Exclude<keyof InboundCycleResult, 'bytes'>,
    n = 1,
    detail: { bytes?: number; reason?: string; item?: DeliveredItem } = {},
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
        this.events.emit(`inbound:${key}`, { mailbox, count: n, ...(detail.reason !== undefined ? { reason: detail.reason } : {}) });
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
  async recover(): Promise<InboundCycleResult> {
    const result = emptyInboundResult();
    await fs.promises.mkdir(this.stagingDir, { recursive: true });
    await this.processRows(this.journal.inStates(this.mailboxId, ['downloading', 'staged', 'placed']), result);
    return result;
  }

  /** One cycle: the journal's unfinished rows, then what the pending list shows. */
  async runCycle(opts: { signal?: AbortSignal } = {}): Promise<InboundCycleResult> {
    const result = emptyInboundResult();
    await fs.promises.mkdir(this.stagingDir, { recursive: true });
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
    const listings: Promise<boolean>[] = [];
    for (const p of pending.parcels) {
      const row = this.journal.get(this.mailboxId, p.parcelId);
      if (!row) {
        listings.push(
          this.journal.recordListed(this.mailboxId, {
            parcelId: p.parcelId,
            fileName: p.fileName,
            ...(p.bytes !== undefined ? { bytes: p.bytes } : {}),
            ...(p.gridIdFrom !== undefined ? { gridIdFrom: p.gridIdFrom } : {}),
            ...(p.gridIdTo !== undefined ? { gridIdTo: p.gridIdTo } : {}),
            ...(p.created !== undefined ? { created: p.created } : {}),
          }),
        );
      } else if (row.state === 'confirmed') {
        if (await this.isRedelivery(row, opts.signal)) this.tally(result, 'redelivered');
      }
    }
    this.tally(result, 'listed', (await Promise.all(listings)).filter(Boolean).length);
    const rows = this.journal.inStates(this.mailboxId, ['listed', 'downloading', 'staged', 'placed']);
    this.current = { total: rows.length, totalBytes: rows.reduce((n, r) => n + (r.declared_bytes ?? 0), 0), result };
    await this.processRows(rows, result, opts.signal);
    return result;
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
      if (!before.has(key)) {
        this.logger.error(
          { code: r.error.code, parcelId: r.roughId, fileName: r.fileName, err: r.error.message },
          'listed parcel cannot be acted on; it stays on the service',
        );
      }
    });
  }

  /** A confirmed parcel listed again: list lag (ignore), or reset on the service (deliver again). */
  private async isRedelivery(row: InboundRow, signal?: AbortSignal): Promise<boolean> {
    const info = await this.options.client.parcel(row.parcel_id, { signal });
    if (info.status !== 'InBoxReady') return false;
    if (this.inbox.redelivery === 'ignore') {
      this.logger.warn({ parcelId: row.parcel_id }, 'parcel was reset on the service after we confirmed it; ignored (redelivery: ignore)');
      return false;
    }
    const delivery = await this.journal.markRedelivery(this.mailboxId, row.parcel_id);
    this.logger.warn(
      { parcelId: row.parcel_id, delivery, previousPath: row.final_path },
      'parcel was reset on the service after we confirmed it; delivering it again under a new name',
    );
    return true;
  }

  private async processRows(rows: InboundRow[], result: InboundCycleResult, signal?: AbortSignal): Promise<void> {
    if (rows.length === 0) return;
    const queue = new PQueue({ concurrency: Math.max(1, this.inbox.concurrency) });
    this.spaceLeft = undefined;
    // Per cycle: a share can be mounted over the inbox between cycles.
    this.calls = FileCalls.of(await onLocalFilesystems(this.stagingDir, this.inbox.dir));
    this.reserved = this.journal.reservedPaths();
    try {
      for (const row of rows) {
        void queue.add(() => this.processParcel(row.parcel_id, result, signal));
      }
      await queue.onIdle();
      while (this.trailing.size > 0) await Promise.all(this.trailing);
    } finally {
      const root = this.root;
      this.root = undefined;
      await root?.then((h) => h.close()).catch(() => undefined);
    }
  }

  /** Drives one parcel from its journal state to `confirmed`, as far as it goes now. */
  private async processParcel(parcelId: number, result: InboundCycleResult, signal?: AbortSignal): Promise<void> {
    const started = this.now();
    this.active++;
    try {
      let row = this.journal.get(this.mailboxId, parcelId);
      if (row && (row.state === 'listed' || row.state === 'downloading')) {
        await this.download(row, signal);
        row = this.journal.get(this.mailboxId, parcelId);
      }
      if (row?.state === 'staged') {
        await this.place(row);
        this.tally(result, 'placed');
        row = this.journal.get(this.mailboxId, parcelId);
      }
      if (row?.state === 'placed') {
        const placed = row;
        const { committed } = await this.confirm(placed, signal);
        // The service has the confirmation; what is left is the journal's commit, which nothing
        // here depends on: the parcel's slot goes to the next parcel, the cycle waits for it.
        this.trail(
          committed.then(
            () => this.received(placed, started, result),
            (err: unknown) => this.failed(parcelId, err, result, signal),
          ),
        );
      }
    } catch (err) {
      await this.failed(parcelId, err, result, signal);
    } finally {
      this.active--;
    }
  }

  /** A confirmed parcel: counted, announced, logged; its name is free for later parcels. */
  private received(row: InboundRow, started: number, result: InboundCycleResult): void {
    if (row.final_path !== null) this.inFlightPaths.delete(row.final_path);
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
      this.tally(result, 'deferred', 1, { reason: describe(journalErr) });
      this.logger.error(
        { parcelId, err: describe(err), journalErr: describe(journalErr) },
        'could not record a failed attempt in the journal',
      );
    }
  }

  /** Work that finishes after its parcel's slot was freed; processRows waits for all of it. */
  private trail(work: Promise<void>): void {
    const tracked = work.catch((err: unknown) => {
      this.logger.error({ ...errorFields(err) }, 'unexpected error after a confirmation');
    });
    this.trailing.add(tracked);
    void tracked.finally(() => this.trailing.delete(tracked));
  }

  private async handleFailure(parcelId: number, err: unknown, result: InboundCycleResult): Promise<void> {
    const reason = describe(err);
    const row = this.journal.get(this.mailboxId, parcelId);
    if (err instanceof DeferError || !row || row.state === 'staged' || row.state === 'placed') {
      // Placement or confirmation waits for the next cycle: the content is safe where it is.
      if (row) this.journal.noteError(this.mailboxId, parcelId, reason);
      if (err instanceof DeferError || row?.state === 'staged') this.heldLocally.set(parcelId, reason);
      this.lastDeferReason = reason;
      this.tally(result, 'deferred', 1, { reason });
      this.logger.warn({ ...errorFields(err), parcelId, state: row?.state, err: reason }, 'parcel deferred to the next cycle');
      return;
    }
    if (err instanceof GridApiError && err.noSuchEndpoint) {
      // The service (or a proxy) has no such endpoint: not the parcel's fault, no attempt counted.
      this.journal.noteError(this.mailboxId, parcelId, reason);
      this.lastDeferReason = reason;
      this.tally(result, 'deferred', 1, { reason });
      this.logger.warn({ ...errorFields(err), parcelId, err: reason }, 'the service has no such endpoint; parcel deferred');
      return;
    }
    // Below, the row leaves staged/placed: its name is free again.
    if (row.final_path !== null) this.inFlightPaths.delete(row.final_path);
    if (err instanceof GridApiError && err.httpStatus === 404) {
      await this.journal.markFailed(this.mailboxId, parcelId, reason);
      this.tally(result, 'failed', 1, { reason });
      this.logger.error({ ...errorFields(err), parcelId, err: reason }, 'parcel failed: the service no longer knows it');
      return;
    }
    const state = await this.journal.recordAttemptFailure(this.mailboxId, parcelId, reason, this.inbox.maxAttempts);
    if (state === 'failed') {
      this.tally(result, 'failed', 1, { reason });
      this.logger.error(
        { ...errorFields(err), parcelId, attempts: this.inbox.maxAttempts, err: reason },
        'parcel FAILED after the last attempt: not placed, not confirmed; it stays on the service',
      );
    } else {
      this.lastDeferReason = reason;
      this.tally(result, 'deferred', 1, { reason });
      this.logger.warn({ ...errorFields(err), parcelId, err: reason }, 'download failed; will retry');
    }
  }

  private stagingPath(parcelId: number): string {
    return path.join(this.stagingDir, `${this.mailboxId}-${parcelId}.part`);
  }

  private async download(row: InboundRow, signal?: AbortSignal): Promise<void> {
    const declared = row.declared_bytes ?? 0;
    const need = declared + (this.inbox.minFreeBytes ?? DEFAULTS.inbox.minFreeBytes);
    if (this.spaceLeft === undefined || this.spaceLeft < need) this.spaceLeft = await freeBytes(this.stagingDir);
    if (this.spaceLeft < need)
      throw new DeferError(`not enough free space in ${this.stagingDir}: ${this.spaceLeft} bytes free, ${need} needed`);
    this.spaceLeft -= declared;
    // No journal write before the download: a crash during it leaves the row `listed` and the
    // next attempt rewrites the .part from the start (its path follows from the parcel id).
    const part = this.stagingPath(row.parcel_id);
    let info;
    const target = new StagingFile(part, this.inbox.fileMode ?? DEFAULTS.fileMode, this.calls);
    try {
      info = await this.options.client.downloadParcel(row.parcel_id, target, {
        ...(row.declared_bytes !== null ? { expectedBytes: row.declared_bytes } : {}),
        ...(signal ? { signal } : {}),
      });
      await target.finish();
    } catch (err) {
      await target.discardAttempt();
      if (DISK_ERRORS.has((err as NodeJS.ErrnoException).code ?? ''))
        throw new DeferError(`cannot write ${part}: ${(err as Error).message}`);
      throw err;
    }
    crashPoint('in.downloaded');
    const fileName = info.fileName ?? row.file_name;
    const finalPath = await this.chooseFinalPath(row, fileName);
    await this.journal.markStaged(this.mailboxId, row.parcel_id, {
      stagingPath: part,
      bytes: info.bytes,
      sha256: info.sha256,
      finalPath,
      fileName,
    });
    crashPoint('in.staged');
  }

  /** The final path from the template and the collision policy; never outside the inbox root. */
  private async chooseFinalPath(row: InboundRow, fileName: string | null): Promise<string> {
    const fallback = `parcel-${row.parcel_id}`;
    const vars = {
      fileName: sanitizeFileName(fileName, fallback),
      parcelId: row.parcel_id,
      gridIdFrom: row.grid_id_from,
      gridIdTo: row.grid_id_to,
      // Decided here, once: the path is journalled with markStaged and never renamed afterwards.
      partner: this.usesPartner ? await this.partners.nameOf(row.grid_id_from) : null,
      mailboxId: this.mailboxId,
      date: new Date(this.now()).toISOString().slice(0, 10),
    };
    const rel = renderTemplate(this.inbox.nameTemplate, vars, fallback);
    const reserved = this.reserved;
    // Reserve a name synchronously, before any await: parcels downloading in parallel must never
    // pick the same name (two parcels named nul.txt once did in the soak, and the second rename
    // replaced the first file). A name found taken on disk is released again.
    const claim = async (p: string): Promise<boolean> => {
      if (reserved.has(p) || this.inFlightPaths.has(p)) return false;
      this.inFlightPaths.add(p);
      if ((await this.calls.exists(p)) || (this.inbox.doneMarker && (await this.calls.exists(p + this.inbox.doneSuffix)))) {
        this.inFlightPaths.delete(p);
        return false;
      }
      return true;
    };
    const plain = resolveInside(this.inbox.dir, rel);
    // A redelivery always gets a name of its own: the ERP may still hold the first copy.
    if (row.delivery === 1) {
      if (await claim(plain)) return plain;
      if (this.inbox.collision === 'overwrite') {
        this.inFlightPaths.add(plain);
        return plain;
      }
      if (this.inbox.collision === 'fail') throw new GridNameCollisionError(plain);
    }
    const tag = row.delivery > 1 ? `${row.parcel_id}-${row.delivery}` : String(row.parcel_id);
    for (let n = 1; ; n++) {
      const candidate = resolveInside(
        this.inbox.dir,
        path.join(path.dirname(rel), uniqueVariant(path.basename(rel), n === 1 ? tag : `${tag}-${n}`)),
      );
      if (await claim(candidate)) return candidate;
    }
  }

  /**
   * staged → placed: rename the fsynced .part to its final name, fsync the directory, write the
   * marker. The inbox is written to by others: its sub-folders are walked one component at a time
   * without following a link (a folder swapped for a symlink would carry the parcel elsewhere), and
   * the rename and the marker resolve against the folder's descriptor, not its path.
   */
  private async place(row: InboundRow): Promise<void> {
    const part = row.staging_path ?? this.stagingPath(row.parcel_id);
    const final = row.final_path as string;
    const name = path.basename(final);
    const rel = path.relative(this.inbox.dir, path.dirname(final));
    let own: DirHandle | undefined;
    try {
      // Sub-folders are walked again for each parcel (one may have been swapped for a link since).
      const dir = rel === '' ? await this.heldRoot() : (own = await openDirInside(this.inbox.dir, rel, { create: true }));
      if (await this.calls.exists(part)) {
        if (this.inbox.collision === 'fail' && (await this.calls.exists(dir.at(name)))) throw new GridNameCollisionError(final);
        if (this.inbox.gid !== undefined) await fs.promises.chown(part, -1, this.inbox.gid);
        if (this.inbox.fileMode !== undefined) await fs.promises.chmod(part, this.inbox.fileMode);
        const to = dir.at(name);
        await this.calls.rename(part, to);
        crashPoint('in.renamed');
        await Promise.all([dir.sync(), fsyncDir(path.dirname(part))]);
      } else {
        // No .part: it was renamed before a crash (nobody else writes in staging), so the file is
        // in place — but that crash may have come before the directory's fsync.
        await dir.sync();
      }
      if (this.inbox.doneMarker) await this.writeMarker(dir, name + this.inbox.doneSuffix);
    } catch (err) {
      if (err instanceof GridNameCollisionError) throw err;
      throw new DeferError(`cannot place ${final}: ${(err as Error).message}`);
    } finally {
      await own?.close();
    }
    await this.journal.markPlaced(this.mailboxId, row.parcel_id);
    crashPoint('in.placed');
  }

  /** The inbox root, opened once per cycle and shared by its parcels. */
  private heldRoot(): Promise<DirHandle> {
    let dir = this.root;
    if (!dir) {
      const opening = openDirInside(this.inbox.dir, '', { create: true });
      // A failed open is not kept: the next parcel tries again.
      opening.catch(() => {
        if (this.root === opening) this.root = undefined;
      });
      this.root = dir = opening;
    }
    return dir;
  }

  /**
   * Creates the done marker with O_CREAT | O_EXCL | O_NOFOLLOW, mode and group set on the
   * descriptor: a link planted under the marker's name is removed, never opened, truncated or
   * re-moded. A regular file of ours already there is the marker of a run that crashed after it.
   */
  private async writeMarker(dir: DirHandle, markerName: string): Promise<void> {
    const mode = this.inbox.fileMode ?? DEFAULTS.fileMode;
    for (let attempt = 0; ; attempt++) {
      try {
        const fh = await createExclusive(dir, markerName, mode, this.inbox.gid);
        try {
          await fh.sync();
        } finally {
          await fh.close();
        }
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw err;
        const st = await fs.promises.lstat(dir.at(markerName));
        if (st.isFile() && st.nlink === 1 && st.uid === process.getuid?.()) break;
        await fs.promises.unlink(dir.at(markerName));
      }
    }
    await dir.sync();
  }

  /** placed → confirmed; an error answer is checked with GET: already transferred counts as done. */
  private async confirm(row: InboundRow, signal?: AbortSignal): Promise<{ committed: Promise<void> }> {
    let how: 'confirmed' | 'already-transferred' = 'confirmed';
    try {
      await this.options.client.confirmParcel(row.parcel_id, { signal });
    } catch (err) {
      // An error answer (or a legacy `false`): the parcel may be confirmed already; its status decides.
      if (!((err instanceof GridApiError && !err.retryable) || err instanceof GridResponseError)) throw err;
      const info = await this.options.client.parcel(row.parcel_id, { signal });
      if (info.status !== 'InBoxTransferred' && info.status !== 'InBoxArchived') throw err;
      how = 'already-transferred';
    }
    crashPoint('in.confirm-answered');
    return { committed: this.journal.markConfirmed(this.mailboxId, row.parcel_id, how).then(() => crashPoint('in.confirmed')) };
  }
}

/** Collision policy `fail`: the final name is taken. The parcel stays unconfirmed and is retried. */
export class GridNameCollisionError extends GridsyncError {
  readonly code = 'INBOUND_NAME_COLLISION';
  constructor(readonly path: string) {
    super(`${path} already exists (collision policy: fail)`);
  }
}

/** A cycle's counters before it starts (the daemon sums cycles with it too). */
export function emptyInboundResult(): InboundCycleResult {
  return { listed: 0, placed: 0, confirmed: 0, failed: 0, redelivered: 0, deferred: 0, unreadable: 0, bytes: 0 };
}

function describe(err: unknown): string {
  if (err instanceof ContentIntegrityError) return `${err.reason}: ${err.message}`;
  if (err instanceof GridError) return err.message;
  return err instanceof Error ? err.message : String(err);
}
