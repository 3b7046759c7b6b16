/**
 * Finding and claiming finished files in an outbox folder. Detection is a rescan of the folder
 * checked against the journal; watcher events only make the rescan come sooner (they are lost on
 * network shares and while the daemon is down). A ready file is claimed: journalled, renamed into
 * processing/, hashed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { FolderHome, fsyncDir, pathFromText, pathToText, type DirHandle } from '../files/index.js';
import { codeOf, errorFields, TroubleLog } from '../errors/index.js';
import { crashPoint, JournalLeaseLostError, JournalSchemaDamagedError, pausePoint } from '../journal/index.js';
import type { OutboundRow } from '../journal/index.js';
import { StabilityTracker, awaitsMarker, outboxIgnore } from './checks.js';
import { WallClockSteps } from './clock-steps.js';
import { OutboxFolderDeniedError } from './folder-denied-error.js';
import type { Disposal } from './disposal.js';
import type { OutboxContext } from './types.js';
import { snapshotClaimed, unsendable } from './snapshot.js';
import { OutboxFileUnmovableError } from './unmovable-error.js';
import { OutboxWatcher } from './watcher.js';
import { lateClaimGivenUp } from './late-claim.js';

/** Files claimed together in one scan step. */
const CLAIM_BATCH = 32;
/** A full filesystem or quota: the claimed file cannot be snapshotted until space is freed. */
const NO_SPACE = new Set(['ENOSPC', 'EDQUOT']);

/** A file found ready: its name as text, its exact path (bytes when not UTF-8), its inode then. */
interface ReadyFile {
  readonly name: string;
  readonly source: string | Buffer;
  readonly ino: number;
}

export class OutboxScanner {
  private readonly isIgnored: (name: string) => boolean;
  private readonly stability: StabilityTracker;
  private readonly clockSteps: WallClockSteps;
  private readonly reportedOdd = new Set<string>();
  /**
   * Entries no rename moves (EPERM at the claim: an immutable file, another user's file in a sticky
   * outbox), by name, as they were then (inode and ctime): reported once, not claimed again at
   * every rescan (a journal row and a report each time) until they change or leave the outbox.
   */
  private readonly unmovable = new Map<string, string>();
  /** Claims already reported as stopped by a full filesystem: one error line each, not one per retry. */
  private readonly reportedNoSpace = new Set<number>();
  private watcher: OutboxWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private scanning: Promise<number> | undefined;
  private rescanSoon = false;
  private running = false;
  /**
   * A scan, or the journalling of claims, that fails every time while its cause lasts (the
   * journal's database down or read-only): told when it starts and when it ends, not per rescan.
   */
  private readonly failing: TroubleLog;
  private readonly claimsRefused: TroubleLog;
  private readonly claimsDenied: TroubleLog;
  /** Claims held back in this cycle by the folders' permissions, by row id, with the reason (`once` does not wait for them). */
  readonly heldLocally = new Map<number, string>();
  private readonly home: FolderHome;

  /**
   * `onScanned` runs after each group of claims with the journal ids of that group, and after each
   * scan of `run` mode without: the pipeline queues what was claimed (the group's rows only — a
   * drop of thousands would otherwise read every unfinished row back once per group).
   */
  constructor(
    private readonly ctx: OutboxContext,
    private readonly disposal: Disposal,
    private readonly onScanned: (claimed?: readonly number[]) => void,
  ) {
    this.isIgnored = outboxIgnore(ctx.cfg);
    this.stability = new StabilityTracker(ctx.cfg.stableMs);
    this.clockSteps = new WallClockSteps(() => Date.now(), ctx.monotonic);
    this.failing = new TroubleLog({
      logger: ctx.logger,
      level: 'warn',
      started: 'outbox scan failed; retrying',
      ended: 'outbox scans get through again',
      now: ctx.monotonic,
    });
    this.home = new FolderHome(ctx.cfg.dir, 'the outbox', ctx.logger, ctx.monotonic);
    this.claimsRefused = new TroubleLog({
      logger: ctx.logger,
      level: 'error',
      started: 'cannot journal the claim; will retry',
      ended: 'claims are journalled again',
      now: ctx.monotonic,
    });
    this.claimsDenied = new TroubleLog({
      logger: ctx.logger,
      level: 'error',
      started: 'the outbox does not let gridsync claim files; they stay there until it does',
      ended: 'files are claimed from the outbox again',
      now: ctx.monotonic,
    });
  }

  /** `run` mode: watch the folder and rescan periodically until `stop`. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.watcher = new OutboxWatcher(this.ctx.cfg, this.isIgnored, this.ctx.logger, () => this.kick());
    this.watcher.start();
    this.kick();
  }

  /** Stops watching; resolves once a scan in progress has finished. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.watcher?.stop();
    this.watcher = undefined;
    await this.scanning;
  }

  /**
   * A scan now, or one more right after the running one: scans never overlap, and events that
   * arrive during a scan coalesce into one rescan.
   */
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
    let wait = this.ctx.cfg.rescanMs;
    try {
      const w = await this.scan();
      // Without the mailbox's lease a scan skips the journal: no sign that it answers again.
      if (this.ctx.lease.mayAct()) this.failing.ok();
      this.onScanned();
      if (w > 0) wait = Math.min(wait, w + 5);
    } catch (err) {
      this.failing.failed(err);
      wait = Math.min(wait, 5000);
    }
    if (this.rescanSoon) {
      this.rescanSoon = false;
      wait = 0;
    }
    this.kick(wait);
  }

  /** Lists the folder, claims ready files; returns ms until a settling file should be looked at again (0 = none). */
  async scan(): Promise<number> {
    const run = this.scanOnce();
    this.scanning = run;
    try {
      return await run;
    } finally {
      this.scanning = undefined;
    }
  }

  private async scanOnce(): Promise<number> {
    // The folder at the path may be another one than the watch is on (made again since).
    await this.watcher?.verify();
    // Only the mailbox's lease holder claims (the claim itself is journalled under its token).
    if (!this.ctx.lease.mayAct()) return 0;
    const { cfg, logger } = this.ctx;
    let dir: DirHandle | undefined;
    let entries: fs.Dirent<Buffer>[];
    try {
      // Listed, looked at and claimed through the folder held open: a swap at its path after this check changes nothing.
      dir = await this.home.open();
      if (!dir) return cfg.rescanMs;
      // Names as bytes: a name that is not UTF-8 would not survive a string (and would be skipped for ever).
      entries = await fs.promises.readdir(dir.self(), { withFileTypes: true, encoding: 'buffer' });
    } catch (err) {
      await dir?.close();
      logger.error({ ...errorFields(dir ? dir.shownError(err) : err) }, 'cannot list the outbox folder');
      return cfg.rescanMs;
    }
    try {
      return await this.claimReady(dir, entries);
    } finally {
      await dir.close();
    }
  }

  private async claimReady(dir: DirHandle, entries: fs.Dirent<Buffer>[]): Promise<number> {
    const { cfg, logger } = this.ctx;
    await this.ctx.refreshCalls();
    const names = new Set(entries.map((e) => e.name.toString('utf8')));
    this.stability.retainOnly(names);
    // A folder that is gone is forgotten (the ERP may create one per day): one back is reported again.
    for (const name of this.reportedOdd) if (!names.has(name)) this.reportedOdd.delete(name);
    for (const name of this.unmovable.keys()) if (!names.has(name)) this.unmovable.delete(name);
    // A claim already journalled is finished by the queue; a second row for it would stay stuck.
    const claiming = new Set((await this.ctx.journal.inStates(this.ctx.mailboxId, cfg.dir, ['claiming'])).map((r) => r.source_path));
    let wait = 0;
    const readyFiles: ReadyFile[] = [];
    // On a network share a file's times come from the server's clock, which may run behind ours by
    // more than stableMs: there a first sighting never counts the file's own age.
    const sinceStep = this.clockSteps.trustedSpanMs();
    const trustedAgeMs = this.ctx.calls.inline ? sinceStep : 0;
    for (const e of entries) {
      const name = e.name.toString('utf8');
      if (this.isIgnored(name)) continue;
      if (e.isDirectory()) {
        // Sub-folders are the ERP's business (an archive, a work folder): report once, leave alone.
        if (!this.reportedOdd.has(name)) {
          this.reportedOdd.add(name);
          logger.warn({ file: name }, 'outbox entry is a folder; left alone');
        }
        continue;
      }
      const source = outboxEntryPath(cfg.dir, e.name);
      if (claiming.has(typeof source === 'string' ? source : pathToText(source))) continue;
      let st: fs.Stats | undefined;
      try {
        st = await this.ctx.calls.lstat(dir.at(e.name));
      } catch {
        continue;
      }
      if (!st) continue;
      if (this.unmovable.get(name) === entryState(st)) continue;
      this.unmovable.delete(name);
      if (!st.isFile()) {
        // A link, FIFO, socket or device is claimed at once like a file: the claim renames the
        // entry itself (a link is never followed, a FIFO never opened) and its check on the
        // descriptor sends it to errorDir with the reason — so every entry in the outbox ends in
        // sentDir or errorDir, and nothing waits there for ever.
        readyFiles.push({ name, source, ino: st.ino });
        continue;
      }
      let ready: number;
      if (cfg.readiness === 'marker') ready = awaitsMarker(cfg, names, name) ? -1 : 0;
      else {
        // File times are wall-clock facts: their age is measured on the wall clock, not ctx.now,
        // and only back to a step forward of that clock (which would age a paused writer's file).
        const unchangedForMs = Math.min(Date.now() - Math.max(st.mtimeMs, st.ctimeMs), trustedAgeMs);
        // How long a (size, mtime) has been seen unchanged is measured on the monotonic clock: a wall
        // clock stepped back would hold the file back by the step, one stepped forward free it early.
        ready = this.stability.observe(name, { size: st.size, mtimeMs: st.mtimeMs, unchangedForMs }, this.ctx.monotonic());
      }
      if (ready > 0) wait = wait === 0 ? ready : Math.min(wait, ready);
      if (ready !== 0) continue;
      this.stability.forget(name);
      readyFiles.push({ name, source, ino: st.ino });
    }
    // Claims run in groups so that their journal commits share one fsync (group commit), but
    // not all at once: each claim opens its file to copy it, and a drop of thousands of files
    // must not run into the descriptor limit.
    // Each group's uploads start while the next group is claimed: across a WAN the claims of a
    // big drop would otherwise all come before the first byte goes out.
    for (let i = 0; i < readyFiles.length; i += CLAIM_BATCH) {
      const ids = await Promise.all(readyFiles.slice(i, i + CLAIM_BATCH).map((f) => this.claim(f, dir)));
      this.onScanned(ids.filter((id) => id !== undefined));
    }
    return wait;
  }

  /** claiming (journal) → rename into processing → private snapshot → claimed (size, sha256); the row's id once journalled. */
  private async claim(file: ReadyFile, dir: DirHandle): Promise<number | undefined> {
    let row: OutboundRow;
    const sourceText = typeof file.source === 'string' ? file.source : pathToText(file.source);
    try {
      row = await this.ctx.journal.markClaiming(this.ctx.mailboxId, this.ctx.cfg.dir, file.name, sourceText, this.ctx.processingDir);
      this.claimsRefused.ok();
    } catch (err) {
      if (err instanceof JournalLeaseLostError) return undefined; // no longer the lease holder: the holder claims it
      // The daemon stops for it and says so once (daemon/fatal-stop.ts).
      if (err instanceof JournalSchemaDamagedError) return undefined;
      this.claimsRefused.failed(err, { file: file.name });
      return undefined;
    }
    crashPoint('out.claiming');
    await this.finishClaim(row, file.ino, dir);
    return row.id;
  }

  /**
   * Completes a claim journalled as `claiming` (also after a crash; `ino` is then unknown).
   *
   * The marker goes first, durably: a marker left behind by a crash would make the next file of
   * that name look finished while the ERP is still writing it. Then the file is renamed into
   * processing/, opened once (O_NOFOLLOW | O_NONBLOCK: a link or FIFO swapped in after the scan is
   * neither followed nor waited on), checked on the descriptor (a regular file, the inode found
   * ready), and copied into a private snapshot while hashing. Everything after — the checks, the
   * upload, the archive — reads the snapshot: a writer who kept a hard link or a descriptor to the
   * outbox file can change that file, never what is validated and sent.
   */
  async finishClaim(row: OutboundRow, ino?: number, held?: DirHandle): Promise<void> {
    const { journal, logger, calls } = this.ctx;
    const processing = row.processing_path as string;
    const name = entryName(pathFromText(row.source_path));
    // Reported as waiting for space until a try ends otherwise (the claim done, or given up).
    let waitsForSpace = false;
    // Claimed after a crash, or from the queue: the folder is opened and checked again.
    let dir = held;
    try {
      // An outbox folder removed since the scan holds no file to claim (unless it was moved already).
      dir ??= await this.home.mustOpen().catch(async (err: unknown) => {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT' && !(await calls.exists(processing))) return undefined;
        throw err;
      });
      const opened = dir;
      if (opened) await this.removeMarker(opened, name).catch((err: unknown) => this.folderDenied(opened, err));
      if (!(await calls.exists(processing))) {
        if (!dir || !(await calls.exists(dir.at(name)))) {
          this.ctx.tally('failed');
          await this.disposal.toError(
            row,
            { reason: 'the file vanished from the outbox before it could be claimed' },
            dir && { dir, name },
          );
          return;
        }
        // The processing path is the row's: a stale owner's late rename and the new owner's are the
        // same move, and only one of them finds the source.
        const token = this.ctx.lease.token();
        this.ctx.lease.assertMayAct();
        pausePoint('out.before-claim-rename');
        const folder = dir;
        await calls.rename(folder.at(name), processing).catch(async (err: unknown) => {
          if ((err as NodeJS.ErrnoException).code === 'EPERM') {
            const st = await calls.lstat(folder.at(name)).catch(() => undefined);
            if (st) this.unmovable.set(name.toString(), entryState(st));
            throw new OutboxFileUnmovableError(folder.shownError(err));
          }
          this.folderDenied(folder, err);
        });
        crashPoint('out.claim-renamed');
        if (await lateClaimGivenUp(this.ctx, row, folder, name, processing, token)) return;
      }
      // Also when a crash came between the rename and these fsyncs: the journal must not say
      // claimed before the move is durable.
      await Promise.all([fsyncDir(path.dirname(processing)), dir?.sync()]);
      const { bytes, sha256 } = await snapshotClaimed(processing, ino, this.ctx.cfg, calls);
      await journal.markClaimed(row.id, bytes, sha256);
      this.claimsDenied.ok();
      this.heldLocally.delete(row.id);
      this.ctx.tally('claimed');
      crashPoint('out.claimed');
    } catch (err) {
      if (err instanceof JournalLeaseLostError) return; // the lease holder finishes it
      if (err instanceof OutboxFolderDeniedError) {
        // The claim stays journalled and is finished once the folders allow it; told once for all files.
        this.ctx.tally('deferred', 1, { reason: err.message, code: err.code, file: row.file_name });
        this.claimsDenied.failed(err, { outbox: this.ctx.cfg.dir });
        this.heldLocally.set(row.id, err.message);
        void journal.noteError(row.id, err.message);
        return;
      }
      const refused = unsendable(err);
      if (refused) {
        this.ctx.tally('failed', 1, { code: refused.errorCode, file: row.file_name, reason: refused.reason });
        await this.disposal.toError(row, refused, dir && { dir, name });
        return;
      }
      const code = (err as NodeJS.ErrnoException).code ?? '';
      if (NO_SPACE.has(code)) {
        // The file has left the outbox and is in no folder the ERP watches: say so where it shows.
        const reason = `no space for the snapshot of a claimed file on the filesystem of ${this.ctx.processingDir}; it waits in processing/ (not in the outbox, not in errorDir) and is tried again — free space there`;
        this.ctx.tally('deferred', 1, { reason, code: codeOf(err), file: row.file_name });
        const first = !this.reportedNoSpace.has(row.id);
        this.reportedNoSpace.add(row.id);
        waitsForSpace = true;
        logger[first ? 'error' : 'debug'](
          { file: row.file_name, processingPath: processing, processingDir: this.ctx.processingDir, ...errorFields(err) },
          'cannot snapshot a claimed file: no space left; it waits in processing/ and is retried',
        );
        void journal.noteError(row.id, reason);
        return;
      }
      // Counted as deferred, so that a claim failing the same way at every scan shows as stopped
      // deliveries (/readyz) instead of a warning nobody reads.
      const reason =
        code === 'EXDEV'
          ? `the outbox and ${this.ctx.processingDir} are no longer on one filesystem (the outbox replaced by a link or a mount?): the file stays in the outbox; put outbox.processingDir on the outbox's filesystem`
          : (err as Error).message;
      this.ctx.tally('deferred', 1, { reason, code: codeOf(err), file: row.file_name });
      logger.warn({ file: row.file_name, ...errorFields(err) }, 'claim interrupted; will finish it later');
      void journal.noteError(row.id, reason);
    } finally {
      if (!waitsForSpace) this.reportedNoSpace.delete(row.id);
      if (!held) await dir?.close();
    }
  }

  /** Throws what a step of the claim met in the held outbox: a permission refusal is the folders', not the file's. */
  private folderDenied(dir: DirHandle, err: unknown): never {
    const shown = dir.shownError(err);
    if ((err as NodeJS.ErrnoException).code === 'EACCES')
      throw new OutboxFolderDeniedError(this.ctx.cfg.dir, this.ctx.processingDir, shown);
    throw shown;
  }

  /** In marker mode, removes `<name><suffix>` from the held folder and makes the removal durable. */
  private async removeMarker(dir: DirHandle, name: string | Buffer): Promise<void> {
    const { cfg } = this.ctx;
    if (cfg.readiness !== 'marker') return;
    const marker = dir.at(typeof name === 'string' ? name + cfg.markerSuffix : Buffer.concat([name, Buffer.from(cfg.markerSuffix)]));
    if (!(await this.ctx.calls.exists(marker))) return;
    await this.ctx.calls.unlinkIfExists(marker);
    await dir.sync();
  }
}

/** What tells an entry changed since it was found unmovable: another inode, or a change of its attributes or owner (its ctime). */
function entryState(st: fs.Stats): string {
  return `${st.ino}:${st.ctimeMs}`;
}

/** The last component of a journalled outbox path (bytes when it is not UTF-8). */
function entryName(source: string | Buffer): string | Buffer {
  return typeof source === 'string' ? path.basename(source) : source.subarray(source.lastIndexOf(0x2f) + 1);
}

/** The path of an outbox entry read as bytes: a string when its name is UTF-8, else the exact bytes. */
export function outboxEntryPath(dir: string, name: Buffer): string | Buffer {
  const text = name.toString('utf8');
  return Buffer.from(text, 'utf8').equals(name)
    ? path.join(dir, text)
    : Buffer.concat([Buffer.from(dir.endsWith('/') ? dir : `${dir}/`), name]);
}
