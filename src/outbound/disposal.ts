/**
 * Where an outbound file ends: sentDir (or deleted) once the service has it, or errorDir with a
 * `<name>.error.json` report beside it. `gridsync requeue` reverses the second with the same
 * report type.
 */
import fs from 'node:fs';
import path from 'node:path';
import { DEFAULTS } from '../config/defaults.js';
import {
  type DirHandle,
  ensureDirDurable,
  FileCalls,
  exists,
  FolderElsewhereError,
  FolderHome,
  freeNameIn,
  fsyncDir,
  moveDurable,
  NamesInUse,
  openDirInside,
  openRegularNoFollow,
  renderTemplate,
  sameFilesystem,
  sanitizeFileName,
  UnsafeFileError,
  uniqueVariant,
} from '../files/index.js';
import { crashPoint, JournalLeaseLostError, pausePoint } from '../journal/index.js';
import type { ErrorDecision, OutboundRow } from '../journal/index.js';
import type { OutboxContext } from './types.js';
import { codeOf, errorFields, scrubHeld } from '../errors/index.js';

const DISK_ERRORS = new Set(['ENOSPC', 'EDQUOT', 'EACCES', 'EPERM', 'EROFS', 'EBUSY']);

/** Names being taken in sentDirs: one for the process, since mailboxes may share a sentDir. */
const ARCHIVE_NAMES = new NamesInUse();

/** The `<name>.error.json` written beside a file in errorDir: why it was not sent, and how to retry. */
export interface ErrorReport {
  /** The file's name in the outbox. */
  readonly file: string;
  readonly reason: string;
  readonly errorCode: string | null;
  readonly httpStatus: number | null;
  readonly attempts: number;
  readonly bytes: number | null;
  readonly sha256: string | null;
  readonly claimedAt: string;
  readonly failedAt: string;
  readonly mailboxId: number;
  readonly journalId: number;
  /** The command that puts the file back into the outbox; null when no file comes with the report (it never left the outbox, or was gone). */
  readonly requeue: string | null;
}

export const ERROR_REPORT_SUFFIX = '.error.json';

/** Our reports are a few hundred bytes; anything much larger was not written by gridsync. */
export const MAX_ERROR_REPORT_BYTES = 64 * 1024;

/**
 * The report beside `file`, or undefined when there is none or it is not one of ours. errorDir is
 * shared: a link, FIFO or device planted under the report's name is never followed or read (open
 * with O_NOFOLLOW | O_NONBLOCK, checked on the descriptor) — an UnsafeFileError says what it is,
 * as it does for a regular file too large to be ours.
 */
export async function readErrorReport(file: string): Promise<Partial<ErrorReport> | undefined> {
  const reportPath = `${file}${ERROR_REPORT_SUFFIX}`;
  const expected = `a regular file of at most ${MAX_ERROR_REPORT_BYTES} bytes`;
  let opened: { fd: number; stat: fs.Stats };
  try {
    opened = await openRegularNoFollow(reportPath, reportPath);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    if (err instanceof UnsafeFileError) throw new UnsafeFileError(reportPath, err.found, expected);
    throw err;
  }
  let text: string;
  try {
    // Read one byte past the bound: the file may have grown since fstat.
    const buf = Buffer.alloc(MAX_ERROR_REPORT_BYTES + 1);
    let n = 0;
    for (let got = -1; got !== 0 && n < buf.length; n += got) got = fs.readSync(opened.fd, buf, n, buf.length - n, n);
    if (n > MAX_ERROR_REPORT_BYTES) throw new UnsafeFileError(reportPath, `a file of more than ${MAX_ERROR_REPORT_BYTES} bytes`, expected);
    text = buf.subarray(0, n).toString('utf8');
  } finally {
    fs.closeSync(opened.fd);
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== 'object' || parsed === null) return undefined;
    const r = parsed as Record<string, unknown>;
    // Only the fields requeue acts on are checked; the rest is for the operator.
    return { ...r, file: typeof r.file === 'string' ? r.file : undefined } as Partial<ErrorReport>;
  } catch {
    return undefined;
  }
}

export class Disposal {
  /**
   * sentDir itself, held open while archives into it are under way: a burst opens it once and its
   * archives share the directory's fsyncs (one open, fsync and close per file before). Let go as
   * soon as none is under way, so a share mounted over it later is seen.
   */
  private sentRoot: { readonly dir: Promise<DirHandle>; users: number } | undefined;

  private readonly sentHome: FolderHome | undefined;
  private readonly errorHome: FolderHome;

  constructor(private readonly ctx: OutboxContext) {
    const { cfg, logger, monotonic } = ctx;
    this.sentHome = cfg.sentDir ? new FolderHome(cfg.sentDir, 'sentDir', logger, monotonic) : undefined;
    this.errorHome = new FolderHome(cfg.errorDir, 'errorDir', logger, monotonic);
  }

  /** sentDir held open, checked on its descriptor to be the folder first used. */
  private openSentRoot(sentDir: string): Promise<DirHandle> {
    return this.sentHome ? this.sentHome.mustOpen() : openDirInside(sentDir, '');
  }

  private async inSentRoot(sentDir: string, use: (dir: DirHandle) => Promise<void>): Promise<void> {
    // Checked when a burst opens it: the descriptor held for the burst does not follow a later swap.
    const held = (this.sentRoot ??= { dir: this.openSentRoot(sentDir), users: 0 });
    held.users++;
    try {
      await use(await held.dir);
    } finally {
      if (--held.users === 0) {
        if (this.sentRoot === held) this.sentRoot = undefined;
        await held.dir.then((d) => d.close()).catch(() => undefined);
      }
    }
  }

  /** uploaded → archived: move to sentDir (or delete), journalled after the rename. */
  async archive(row: OutboundRow): Promise<void> {
    const { cfg, journal, calls } = this.ctx;
    const processing = row.processing_path as string;
    let finalPath: string | null = row.final_path;
    try {
      this.ctx.lease.assertMayAct();
      if (await calls.exists(processing)) {
        if (cfg.archive === 'delete' || !cfg.sentDir) {
          await calls.unlinkIfExists(processing);
          finalPath = null;
        } else {
          const rel = renderTemplate(
            cfg.sentTemplate,
            {
              fileName: sanitizeFileName(row.file_name, `file-${row.id}`),
              parcelId: row.parcel_id,
              date: new Date(this.ctx.now()).toISOString().slice(0, 10),
              mailboxId: this.ctx.mailboxId,
            },
            `file-${row.id}`,
          );
          // sentDir is shared: its sub-folders are walked without following a link (one swapped
          // for a link would carry the file elsewhere, even into the private stateDir).
          const sub = path.dirname(rel) === '.' ? '' : path.dirname(rel);
          // Folders it creates get the umask's mode, as mkdir -p gave them before.
          await ensureDirDurable(cfg.sentDir, calls);
          const sentDir = cfg.sentDir;
          const moveInto = async (dir: DirHandle): Promise<void> => {
            const folder = path.join(sentDir, sub);
            let name: string | undefined;
            try {
              name = await freeNameIn(dir, path.basename(rel), String(row.parcel_id), calls, { names: ARCHIVE_NAMES, folder });
              finalPath = path.join(folder, name);
              await moveDurable(processing, dir.at(name), calls, dir);
            } catch (err) {
              throw dir.shownError(err);
            } finally {
              if (name !== undefined) ARCHIVE_NAMES.release(path.join(folder, name));
            }
          };
          if (sub === '') await this.inSentRoot(sentDir, moveInto);
          else {
            // Sub-folders are walked again for each file (one may have been swapped for a link since).
            const root = await this.openSentRoot(sentDir);
            try {
              const dir = await openDirInside(root, sub, { create: true, mode: 0o777 });
              try {
                await moveInto(dir);
              } finally {
                await dir.close();
              }
            } finally {
              await root.close();
            }
          }
        }
        crashPoint('out.archive-renamed');
        await fsyncDir(path.dirname(processing));
      }
      await journal.markArchived(row.id, finalPath);
      this.ctx.tally('archived', 1, {
        bytes: row.bytes ?? 0,
        item: { parcelId: row.parcel_id as number, fileName: row.file_name, path: finalPath, partner: this.ctx.cfg.gridIdTo ?? null },
      });
      crashPoint('out.archived');
    } catch (err) {
      if (err instanceof JournalLeaseLostError) return; // the lease holder archives it
      void journal.noteError(row.id, `archive failed: ${(err as Error).message}`);
      this.ctx.tally('deferred', 1, { code: codeOf(err), file: row.file_name });
      const waits = DISK_ERRORS.has((err as NodeJS.ErrnoException).code ?? '') || err instanceof UnsafeFileError;
      if (!waits && !(err instanceof FolderElsewhereError)) throw err;
      // A sentDir leading elsewhere is told once, by its FolderHome, not once per file and try.
      if (waits) this.ctx.logger.warn({ file: row.file_name, ...errorFields(err) }, 'cannot archive yet; will retry');
    }
  }

  /**
   * → erroring (reason journalled) → file and `<name>.error.json` in errorDir → in_error. A file
   * whose claim failed is still in the outbox: `unclaimed` names it in the outbox held open by the
   * claim, so that an outbox swapped for a link since cannot send another directory's file there.
   */
  async toError(
    row: OutboundRow,
    d: ErrorDecision,
    unclaimed?: { readonly dir: DirHandle; readonly name: string | Buffer },
  ): Promise<void> {
    const { cfg, journal } = this.ctx;
    if (row.state !== 'erroring') await journal.markErroring(row.id, d);
    const processing = row.processing_path as string;
    let dir: DirHandle | undefined;
    try {
      // A missing errorDir is made first; the check is on the descriptor of what is then opened.
      await ensureDirDurable(cfg.errorDir);
      // Written through the folder held open and checked there: a swap at its path after the check changes nothing.
      dir = await this.errorHome.mustOpen();
      pausePoint('out.error-folder-checked');
      // Woken after a takeover, a holder finding the file gone wrote a second report for nothing.
      this.ctx.lease.assertMayAct();
      const original = row.state === 'claiming' && unclaimed ? unclaimed.dir.at(unclaimed.name) : undefined;
      const source = (await exists(processing)) ? processing : original !== undefined && (await exists(original)) ? original : null;
      const sourceDir = source === processing || !unclaimed ? path.dirname(processing) : unclaimed.dir.self();
      const stuck = source ? await cannotCross(source, sourceDir, cfg.errorDir) : undefined;
      // No file joins the report when its copy was removed, or held nothing and could not cross.
      const moves = source !== null && !stuck;
      const name = sanitizeFileName(row.file_name, `file-${row.id}`);
      // A try cut short after its report was written (a crash, a kill) left that report alone: the
      // file joins it under its name, or the report would describe a file that is not there.
      const earlier = row.state === 'erroring' ? await ownReport(dir, name, row.id) : undefined;
      if (earlier?.withFile && !source) {
        // Killed after the move, before the journal heard of it: file and report are in place. A
        // second report under another name, without a file, was written before.
        await dir.sync();
        const errorFile = path.join(cfg.errorDir, earlier.name);
        return await this.inError(row, d, errorFile, `${errorFile}${ERROR_REPORT_SUFFIX}`);
      }
      // A copy across filesystems cut short left its source whole: the copy goes, the move is made again.
      if (earlier?.withFile && moves) await fs.promises.rm(dir.at(earlier.name), { force: true });
      if (earlier !== undefined) await fs.promises.rm(dir.at(`${earlier.name}${ERROR_REPORT_SUFFIX}`), { force: true });
      // A free name also without a file: a report of an earlier file of that name must not block this one's.
      const freeIn = earlier?.name ?? (await freeNameIn(dir, name, String(row.id)));
      const finalPath = path.join(cfg.errorDir, freeIn);
      const current = (await journal.get(row.id)) as OutboundRow;
      const report: ErrorReport = {
        file: row.file_name,
        reason: stuck
          ? `${d.reason}; ${stuck} cannot be moved to the error folder's filesystem and holds no data: it was removed`
          : d.reason,
        errorCode: d.errorCode ?? null,
        httpStatus: d.httpStatus ?? null,
        attempts: current.attempts,
        bytes: current.bytes,
        sha256: current.sha256,
        claimedAt: new Date(current.created_at).toISOString(),
        failedAt: new Date(this.ctx.now()).toISOString(),
        mailboxId: this.ctx.mailboxId,
        journalId: row.id,
        // The command as the operator must type it: without -c, requeue would look for another config.
        // requeue finds nothing to move without the file: it would name it "not found" (exit 2).
        requeue: moves ? `gridsync requeue${this.ctx.configFile ? ` -c ${this.ctx.configFile}` : ''} ${finalPath}` : null,
      };
      const reportPath = dir.at(`${freeIn}${ERROR_REPORT_SUFFIX}`);
      await writeReport(reportPath, report);
      pausePoint('out.error-report-written');
      if (moves) {
        try {
          // Its one fsync of errorDir makes the report's name durable with the file's. The report,
          // synced first, never follows its file: a crash before that fsync leaves the report alone
          // at most (on ext4, where a file's fsync commits its name), which the retry completes.
          await moveDurable(source, dir.at(freeIn), FileCalls.POOL, dir);
          pausePoint('out.error-moved');
        } catch (err) {
          // Tried again after the next scan, under a name chosen again: this report would be left
          // without its file, one more at every try.
          await fs.promises.rm(reportPath, { force: true }).catch(() => undefined);
          // Unless no rename moves the file out of the outbox: tried again, it would fail alike for ever.
          if (!unclaimed || source !== original || (err as NodeJS.ErrnoException).code !== 'EPERM') throw err;
          const outboxFile = path.join(cfg.dir, row.file_name);
          const reason =
            `${d.reason}; it cannot be moved into the error folder either (EPERM), so it stays in the outbox as ${outboxFile}, unsent: it is not ` +
            'claimed again until it changes (another inode, a change of its attributes or owner) or gridsync starts again. ' +
            "Make it movable by gridsync's user (chattr -i; in a sticky outbox, give it to that user), or take it out of the outbox";
          await writeReport(reportPath, { ...report, reason, errorCode: 'OUTBOUND_FILE_UNMOVABLE', requeue: null });
          await dir.sync();
          await journal.noteError(row.id, reason);
          await journal.markInError(row.id, null);
          this.ctx.logger.error(
            {
              file: row.file_name,
              outboxFile,
              reason,
              errorCode: 'OUTBOUND_FILE_UNMOVABLE',
              report: `${finalPath}${ERROR_REPORT_SUFFIX}`,
              // Both folders under the paths an operator knows, not as descriptors.
              ...errorFields(dir.shownError(unclaimed.dir.shownError(err))),
            },
            'file cannot leave the outbox: it stays there, its report in the error folder',
          );
          return;
        }
      } else {
        if (source) {
          await fs.promises.rm(source, { force: true });
          await fsyncDir(sourceDir);
        }
        await dir.sync();
      }
      await this.inError(row, d, moves ? finalPath : null, `${finalPath}${ERROR_REPORT_SUFFIX}`);
    } catch (caught) {
      if (caught instanceof JournalLeaseLostError) return; // the lease holder finishes it
      // Both folders held open show under the paths an operator knows, not as descriptors.
      const shown = unclaimed ? unclaimed.dir.shownError(caught) : caught;
      const err = dir ? dir.shownError(shown) : shown;
      const reason = `cannot move to the error folder: ${(err as Error).message}`;
      void journal.noteError(row.id, reason);
      // Counted at every try: an error folder that stays unwritable must show as deferred work (and
      // as stuck when nothing else moves), not as a quiet warning per scan.
      this.ctx.tally('deferred', 1, { code: codeOf(err), file: row.file_name, reason });
      this.ctx.logger.warn({ file: row.file_name, ...errorFields(err) }, 'cannot move the file to the error folder yet; will retry');
    } finally {
      await dir?.close();
    }
  }

  /** The last step of `toError`: journalled in error, told once. `errorFile` null: the report came alone. */
  private async inError(row: OutboundRow, d: ErrorDecision, errorFile: string | null, report: string): Promise<void> {
    await this.ctx.journal.markInError(row.id, errorFile);
    const told = { file: row.file_name, reason: d.reason, errorCode: d.errorCode ?? undefined, httpStatus: d.httpStatus ?? undefined };
    // Without its file, the report is what an operator looks for: an errorFile that is not there misled.
    if (errorFile !== null) this.ctx.logger.error({ ...told, errorFile }, 'file moved to the error folder');
    else this.ctx.logger.error({ ...told, report }, 'file refused; no file left to move, its report is in the error folder');
  }
}

/** Writes a report durably; never through a link planted under its name (errorDir may be shared with the ERP). */
async function writeReport(reportPath: string, report: ErrorReport): Promise<void> {
  const fh = await fs.promises.open(
    reportPath,
    fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW,
    DEFAULTS.fileMode,
  );
  try {
    // The ERP group reads errorDir: a reason quoting a secret the service echoed is masked.
    await fh.writeFile(scrubHeld(`${JSON.stringify(report, null, 2)}\n`));
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * The name under which row `id` left its report in the errorDir held as `dir`, and whether a file
 * is there under it (the move was made, or a copy across filesystems begun), looked for where a try
 * picks its name (`freeNameIn`): the first name, then its variants, up to the first with neither a
 * file nor a report. That name had neither when the report was written, so a file there is the
 * report's own.
 */
async function ownReport(dir: DirHandle, name: string, id: number): Promise<{ name: string; withFile: boolean } | undefined> {
  for (let n = 0; ; n++) {
    const candidate = n === 0 ? name : uniqueVariant(name, n === 1 ? String(id) : `${id}-${n}`);
    const file = await exists(dir.at(candidate));
    const report = await readErrorReport(dir.at(candidate)).catch(() => undefined);
    if (report?.journalId === id) return { name: candidate, withFile: file };
    if (!file && !report && !(await exists(dir.at(`${candidate}${ERROR_REPORT_SUFFIX}`)))) return undefined;
  }
}

/**
 * What `entry` is when it cannot be moved from `from` to an errorDir on another filesystem: a
 * FIFO, socket or device (only a rename moves one); undefined for anything that can be moved.
 * Such an entry holds no data, so it is removed instead: kept, it would be tried again after every
 * scan, for ever.
 */
async function cannotCross(entry: string | Buffer, from: string, errorDir: string): Promise<string | undefined> {
  const st = await fs.promises.lstat(entry);
  if (st.isFile() || st.isSymbolicLink() || (await sameFilesystem(from, errorDir))) return undefined;
  return st.isFIFO() ? 'a FIFO' : st.isSocket() ? 'a socket' : 'a device node';
}

/**
 * The name `file` in an errorDir goes back into its outbox under: the one its report gives (its
 * name in the outbox), else its own. Reads the report: an UnsafeFileError when that is no report
 * of ours (see readErrorReport) — read before anything is journalled or moved.
 */
export async function requeueName(file: string): Promise<string> {
  const original = (await readErrorReport(file))?.file;
  return original && !original.includes('/') && original !== '.' && original !== '..' ? original : path.basename(file);
}

/**
 * Moves `file` from an errorDir back into `outboxDir` under `name` (or a fresh `requeued-…` name
 * when that is taken), durably, and removes its report. With `markerSuffix` (an outbox read with
 * `readiness: marker`) the file's marker follows it: without one the file would wait in the outbox
 * for good. The file may be claimed as soon as it is there: whatever the claim must know of it
 * (`requeue --force`) is journalled first. Returns the new path.
 */
export async function moveBackToOutbox(
  file: string,
  outboxDir: string,
  name: string,
  now: () => number = Date.now,
  markerSuffix?: string,
): Promise<string> {
  let dest = path.join(outboxDir, name);
  if (await exists(dest)) dest = path.join(outboxDir, `requeued-${now()}-${name}`);
  await moveDurable(file, dest);
  await fsyncDir(path.dirname(file));
  await fs.promises.rm(`${file}${ERROR_REPORT_SUFFIX}`, { force: true });
  await fsyncDir(path.dirname(file));
  if (markerSuffix !== undefined) {
    // O_EXCL: a link planted under the marker's name is not followed; a marker already there will do.
    await fs.promises.writeFile(`${dest}${markerSuffix}`, '', { flag: 'wx' }).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
    });
    await fsyncDir(outboxDir);
  }
  return dest;
}
