/**
 * Where a parcel goes in the inbox and how it gets there: the final name (template, collision
 * policy, names reserved by parcels in flight), then staged → placed — the verified staging file
 * linked under its final name (never replacing a file, unless the policy is `overwrite`), the
 * directory's fsync, the done marker — without following a link planted by whoever else writes in
 * the inbox.
 */
import fs from 'node:fs';
import path from 'node:path';
import {
  createExclusive,
  CrossFilesystemError,
  FolderHome,
  fsyncDir,
  openDirInside,
  renderTemplate,
  resolveInside,
  sanitizeFileName,
  uniqueVariant,
  unlikeMarker,
  type DirHandle,
  type FileCalls,
} from '../files/index.js';
import { DEFAULTS } from '../config/defaults.js';
import {
  crashPoint,
  JournalLeaseLostError,
  pausePoint,
  type InboundJournal,
  type InboundRow,
  type MailboxLease,
} from '../journal/index.js';
import type { Logger } from '../log.js';
import { DeferError, GridNameCollisionError, StagingLostError } from './errors.js';
import { linkedUnderName, renamedUnderName } from './final-name.js';
import type { PartnerNames } from './partner-names.js';
import { holdsContent } from './placed-file.js';
import type { InboxConfig } from './types.js';

/** How often one placement follows the inbox path to another folder before it waits for the next cycle. */
const MAX_FOLDER_MOVES = 3;

/** What became of one try to put a staged file under its name. */
type Put = 'placed' | 'taken' | 'moved';

export interface PlacementContext {
  readonly inbox: InboxConfig;
  readonly logger: Logger;
  readonly mailboxId: number;
  readonly journal: InboundJournal;
  readonly partners: PartnerNames;
  readonly now: () => number;
  readonly lease: MailboxLease;
  /** The cycle's cheap file calls (files/calls): decided again at each cycle. */
  calls(): FileCalls;
}

export class InboxPlacement {
  /** Final paths taken by parcels in flight in this process, until confirmed or given up. */
  private readonly inFlightPaths = new Set<string>();
  /** Final paths whose done marker this process wrote (a placed row recovered from a crash is not here). */
  private readonly marked = new Set<string>();
  /** Final paths of the journal's staged/placed rows when the cycle started: a new parcel must not take one. */
  private reserved = new Set<string>();
  /** The inbox root, held open for one cycle (most templates place into the root). */
  private root: Promise<DirHandle> | undefined;
  /** Roots let go in this cycle because the inbox path came to lead to another folder; closed at its end. */
  private retired: Promise<DirHandle>[] = [];
  /** The root each parcel of this cycle was placed through, for its done marker (beside the file, wherever that folder went). */
  private readonly placedVia = new Map<string, Promise<DirHandle>>();
  /** Only a template that uses `{partner}` asks the service for names. */
  private readonly usesPartner: boolean;
  private readonly home: FolderHome;

  constructor(private readonly ctx: PlacementContext) {
    this.usesPartner = ctx.inbox.nameTemplate.includes('{partner}');
    this.home = new FolderHome(ctx.inbox.dir, 'the inbox', ctx.logger, () => performance.now());
  }

  /** At a cycle's start: the names the journal's unfinished rows hold. */
  async beginCycle(): Promise<void> {
    this.reserved = await this.ctx.journal.reservedPaths();
  }

  /** At a cycle's end: the inbox root is let go (a share can be mounted over it between cycles). */
  async endCycle(): Promise<void> {
    const roots = [this.root, ...this.retired];
    this.root = undefined;
    this.retired = [];
    this.placedVia.clear();
    await Promise.all(roots.map((root) => root?.then((h) => h.close()).catch(() => undefined)));
  }

  /** A parcel confirmed or sent back to be downloaded again: its name is free for later parcels. */
  release(finalPath: string | null): void {
    if (finalPath === null) return;
    this.inFlightPaths.delete(finalPath);
    this.marked.delete(finalPath);
  }

  /** The final path from the template and the collision policy; never outside the inbox root. */
  async chooseFinalPath(row: InboundRow, fileName: string | null, signal?: AbortSignal): Promise<string> {
    const fallback = `parcel-${row.parcel_id}`;
    const vars = {
      fileName: sanitizeFileName(fileName, fallback),
      parcelId: row.parcel_id,
      gridIdFrom: row.grid_id_from,
      gridIdTo: row.grid_id_to,
      // Decided here, once: the path is journalled with markStaged. A name found taken when the
      // parcel is placed changes the file's name only, never its folders (chooseAgain).
      partner: this.usesPartner ? await this.ctx.partners.nameOf(row.grid_id_from, signal) : null,
      mailboxId: this.ctx.mailboxId,
      date: new Date(this.ctx.now()).toISOString().slice(0, 10),
    };
    const rel = this.unlikeMarker(renderTemplate(this.ctx.inbox.nameTemplate, vars, fallback));
    const plain = resolveInside(this.ctx.inbox.dir, rel);
    // A redelivery always gets a name of its own: the ERP may still hold the first copy.
    if (row.delivery === 1) {
      if (await this.claim(plain)) return plain;
      if (this.ctx.inbox.collision === 'overwrite') {
        this.inFlightPaths.add(plain);
        return plain;
      }
      if (this.ctx.inbox.collision === 'fail') throw new GridNameCollisionError(plain);
    }
    return this.freeVariant(row, rel);
  }

  /** The first unique variant of `rel` (tagged with the parcel id, and the delivery after the first) that is free, claimed. */
  private async freeVariant(row: InboundRow, rel: string): Promise<string> {
    const tag = row.delivery > 1 ? `${row.parcel_id}-${row.delivery}` : String(row.parcel_id);
    for (let n = 1; ; n++) {
      const variant = uniqueVariant(path.basename(rel), n === 1 ? tag : `${tag}-${n}`);
      const candidate = resolveInside(this.ctx.inbox.dir, path.join(path.dirname(rel), this.unlikeMarker(variant)));
      if (await this.claim(candidate)) return candidate;
    }
  }

  /** With done markers on, a parcel never goes under a name the ERP would read as a marker (files/naming). */
  private unlikeMarker(name: string): string {
    return this.ctx.inbox.doneMarker ? unlikeMarker(name, this.ctx.inbox.doneSuffix) : name;
  }

  /**
   * Takes the name `p` unless a parcel holds it or the inbox has it (or its done marker). Reserved
   * synchronously, before any await: parcels downloading in parallel must never pick the same name
   * (two parcels named nul.txt once did in the soak, and the second rename replaced the first
   * file). A name found taken on disk is released again.
   */
  private async claim(p: string): Promise<boolean> {
    if (this.reserved.has(p) || this.inFlightPaths.has(p)) return false;
    this.inFlightPaths.add(p);
    let taken: boolean;
    try {
      taken =
        (await this.ctx.calls().exists(p)) ||
        (this.ctx.inbox.doneMarker === true && (await this.ctx.calls().exists(p + this.ctx.inbox.doneSuffix)));
    } catch (err) {
      this.inFlightPaths.delete(p);
      throw err;
    }
    if (taken) this.inFlightPaths.delete(p);
    return !taken;
  }

  /**
   * A free name for a parcel whose journalled name was found taken in the inbox when it was to be
   * placed (`unique`): a variant of it in the same folder. Journalled before anything goes under
   * it: a restart looks for the parcel's file under the journalled name.
   */
  private async chooseAgain(row: InboundRow, taken: string): Promise<string> {
    this.release(taken);
    const final = await this.renamed(row, taken, await this.freeVariant(row, path.relative(this.ctx.inbox.dir, taken)));
    this.ctx.logger.info(
      { parcelId: row.parcel_id, taken, file: final },
      'another file took the inbox name chosen for a parcel before it was placed; the parcel goes under a free name',
    );
    return final;
  }

  /** Journals a staged parcel's new final path (claimed by the caller; let go again when the journal refuses it). */
  private async renamed(row: InboundRow, old: string, final: string): Promise<string> {
    try {
      await this.ctx.journal.markFinalPathTaken(this.ctx.mailboxId, row.parcel_id, old, final);
    } catch (err) {
      this.release(final);
      throw err;
    }
    return final;
  }

  /** Whether a journalled path lies outside the configured inbox: `inbox.dir` was changed since. */
  private outsideInbox(final: string): boolean {
    const rel = path.relative(this.ctx.inbox.dir, final);
    return rel.startsWith('..') || path.isAbsolute(rel);
  }

  /**
   * A parcel staged while the inbox was elsewhere (`inbox.dir` changed with the daemon stopped):
   * it goes into the inbox the config names now, under its file name (or a free variant),
   * journalled first. Placed at the old path, it would climb out of the inbox — refused, and the
   * parcel deferred at every cycle, for good.
   */
  private async intoMovedInbox(row: InboundRow, old: string): Promise<string> {
    this.release(old);
    const plain = resolveInside(this.ctx.inbox.dir, path.basename(old));
    const final = await this.renamed(row, old, (await this.claim(plain)) ? plain : await this.freeVariant(row, path.basename(old)));
    this.ctx.logger.info(
      { parcelId: row.parcel_id, was: old, file: final },
      'the inbox moved since the parcel was staged; it goes into the configured inbox',
    );
    return final;
  }

  /**
   * staged → placed: the fsynced .part under its final name, the directories fsynced, `placed`
   * journalled. The inbox is written to by others: its sub-folders are walked one component at a
   * time without following a link (a folder swapped for a symlink would carry the parcel
   * elsewhere), and the name is given against the folder's descriptor, not its path. A name that
   * holds another file by then fails the parcel with `fail`; with `unique` the parcel tries again
   * under a free name. The done marker comes after (`mark`).
   */
  async place(row: InboundRow, part: string): Promise<void> {
    let final = row.final_path as string;
    if (this.outsideInbox(final)) final = await this.intoMovedInbox(row, final);
    for (let moves = 0; ;) {
      const root = this.heldRoot();
      const put = await this.inFolderOf(final, 'cannot place', (dir, name) => this.putInPlace(row, part, final, dir, name), root);
      if (put === 'placed') {
        if (this.ctx.inbox.doneMarker) this.placedVia.set(final, root);
        break;
      }
      if (put === 'moved') {
        // A path that keeps changing under us is no folder to place into now.
        if (++moves > MAX_FOLDER_MOVES) throw new DeferError(`cannot place ${final}: its folder kept changing while the parcel was placed`);
        this.retire(root);
        continue;
      }
      if (this.ctx.inbox.collision === 'fail') throw new GridNameCollisionError(final);
      final = await this.chooseAgain(row, final);
    }
    await this.ctx.journal.markPlaced(this.ctx.mailboxId, row.parcel_id);
    crashPoint('in.placed');
  }

  /**
   * The staged file under `name` in `dir` (the folder of `final`), durably: `taken` when the name
   * holds another file, `moved` when the folder's path leads to another folder by now.
   */
  private async putInPlace(row: InboundRow, part: string, final: string, dir: DirHandle, name: string): Promise<Put> {
    const to = dir.at(name);
    if (!(await this.ctx.calls().exists(part))) {
      // No .part, and the final file holds the staged content: placed before a crash that may have
      // come before the directory's fsync.
      if (!(await holdsContent(to, row))) throw new StagingLostError(part, final);
      await dir.sync();
      return 'placed';
    }
    if (this.ctx.inbox.gid !== undefined) await fs.promises.chown(part, -1, this.ctx.inbox.gid);
    if (this.ctx.inbox.fileMode !== undefined) await fs.promises.chmod(part, this.ctx.inbox.fileMode);
    // A stale owner (lease lost) places nothing. One frozen right here and woken later is
    // harmless: the new owner places this same staging file (the journalled path) under the
    // journalled name, and neither replaces a file: the late one finds the staging file gone, or
    // the name holding the same content.
    this.ctx.lease.assertMayAct();
    pausePoint('in.before-rename');
    // The root is held for the whole cycle, and a burst's cycle is long: an ERP that takes a batch by
    // moving the inbox away and making a new one (or a share mounted over it) would otherwise get
    // the rest of the cycle's parcels in the folder it already took.
    if (!(await this.leadsTo(dir, path.dirname(final)))) return 'moved';
    if (!(await this.named(row, part, to))) return 'taken';
    crashPoint('in.renamed');
    await Promise.all([dir.sync(), fsyncDir(path.dirname(part))]);
    return 'placed';
  }

  /** Whether `folder`, followed as the operator's own link at the root is, is still the directory `dir` holds. */
  private async leadsTo(dir: DirHandle, folder: string): Promise<boolean> {
    const calls = this.ctx.calls();
    const [held, now] = await Promise.all([calls.fstat(dir.handle.fd), calls.stat(folder)]);
    return now !== undefined && now.dev === held.dev && now.ino === held.ino;
  }

  /** The root `root` is no longer where the inbox path leads: the next parcel opens it anew. */
  private retire(root: Promise<DirHandle>): void {
    if (this.root !== root) return;
    this.root = undefined;
    this.retired.push(root);
  }

  /**
   * Gives the staging file the name `to`; false when `to` holds a file that is not this parcel's.
   * `overwrite` renames over whatever is there. Otherwise the file is linked under `to`, then its
   * staging name removed: link(2), unlike rename, never replaces, so a file someone wrote under
   * the name since it was chosen (the placement deferred for cycles, the name journalled before a
   * crash) is kept.
   */
  private async named(row: InboundRow, part: string, to: string): Promise<boolean> {
    const calls = this.ctx.calls();
    if (this.ctx.inbox.collision === 'overwrite') {
      await renamedUnderName(calls, part, to);
      return true;
    }
    if (!(await linkedUnderName(calls, part, to)) && !(await this.isParcelFile(row, part, to))) return false;
    crashPoint('in.linked');
    await calls.unlinkIfExists(part);
    return true;
  }

  /**
   * Whether the file found under `to` is this parcel's: the staging file itself, linked there
   * before a crash that came before the unlink (the ERP may have changed it in place since; its
   * content then no longer proves anything, and linking the changed file under a new name would
   * deliver the ERP's bytes as the parcel), or a file with exactly the staged content.
   */
  private async isParcelFile(row: InboundRow, part: string, to: string): Promise<boolean> {
    const [staged, found] = await Promise.all([this.ctx.calls().lstat(part), this.ctx.calls().lstat(to)]);
    if (staged && found && staged.dev === found.dev && staged.ino === found.ino) return true;
    return holdsContent(to, row);
  }

  /**
   * The done marker of a placed parcel, before its confirm. Only once `placed` is durable: the
   * marker tells the ERP to take the file away, and a restart that found a staged row with neither
   * its staging file nor its final file would download the parcel again (a second copy). A row
   * recovered in `placed` gets its marker unless its file is gone (then the ERP has taken it).
   */
  async mark(row: InboundRow): Promise<void> {
    const final = row.final_path as string;
    if (!this.ctx.inbox.doneMarker || this.marked.has(final)) return;
    if (this.outsideInbox(final)) {
      // Placed before `inbox.dir` changed: the old folder is no longer ours to write in.
      this.ctx.logger.warn(
        { parcelId: row.parcel_id, file: final },
        'placed in the former inbox before inbox.dir changed: no done marker written there',
      );
      this.marked.add(final);
      return;
    }
    const via = this.placedVia.get(final);
    await this.inFolderOf(
      final,
      'cannot write the done marker of',
      async (dir, name) => {
        if (await this.ctx.calls().exists(dir.at(name))) {
          this.ctx.lease.assertMayAct();
          await this.writeMarker(dir, name + this.ctx.inbox.doneSuffix);
          crashPoint('in.marked');
        }
      },
      via,
    );
    this.placedVia.delete(final);
    this.marked.add(final);
  }

  /**
   * Runs a step in the folder of a final path. Sub-folders are walked again for each parcel (one
   * may have been swapped for a link since); a file call's failure defers the parcel, named by the
   * folder's real path, never its descriptor path.
   */
  private async inFolderOf<T>(
    final: string,
    what: string,
    step: (dir: DirHandle, name: string) => Promise<T>,
    root: Promise<DirHandle> = this.heldRoot(),
  ): Promise<T> {
    const rel = path.relative(this.ctx.inbox.dir, path.dirname(final));
    let own: DirHandle | undefined;
    let dir: DirHandle | undefined;
    try {
      dir = rel === '' ? await root : (own = await openDirInside(await root, rel, { create: true }));
      return await step(dir, path.basename(final));
    } catch (err) {
      if (err instanceof StagingLostError || err instanceof JournalLeaseLostError) throw err;
      // Its own code: the remedy is a setting, not a folder's state.
      if (err instanceof CrossFilesystemError) throw dir?.shownError(err) ?? err;
      throw new DeferError(`${what} ${final}: ${dir?.shown((err as Error).message) ?? (err as Error).message}`);
    } finally {
      await own?.close();
    }
  }

  /** The inbox root, opened once per cycle and shared by its parcels. */
  private heldRoot(): Promise<DirHandle> {
    let dir = this.root;
    if (!dir) {
      // Held for the cycle and checked on its descriptor: a swap of the path after the check does not move it.
      const opening = this.home.mustOpen().then((root) => {
        pausePoint('in.inbox-checked');
        return root;
      });
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
    const mode = this.ctx.inbox.fileMode ?? DEFAULTS.fileMode;
    for (let attempt = 0; ; attempt++) {
      try {
        const fh = await createExclusive(dir, markerName, mode, this.ctx.inbox.gid);
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
}
