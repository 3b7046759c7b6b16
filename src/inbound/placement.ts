/**
 * Where a parcel goes in the inbox and how it gets there: the final name (template, collision
 * policy, names reserved by parcels in flight), then staged → placed — the rename of the verified
 * staging file, the directory's fsync, the done marker — without following a link planted by
 * whoever else writes in the inbox.
 */
import fs from 'node:fs';
import path from 'node:path';
import {
  createExclusive,
  fsyncDir,
  openDirInside,
  renderTemplate,
  resolveInside,
  sanitizeFileName,
  uniqueVariant,
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
import { DeferError, GridNameCollisionError, StagingLostError } from './errors.js';
import type { PartnerNames } from './partner-names.js';
import { holdsContent } from './placed-file.js';
import type { InboxConfig } from './types.js';

export interface PlacementContext {
  readonly inbox: InboxConfig;
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
  /** Only a template that uses `{partner}` asks the service for names. */
  private readonly usesPartner: boolean;

  constructor(private readonly ctx: PlacementContext) {
    this.usesPartner = ctx.inbox.nameTemplate.includes('{partner}');
  }

  /** At a cycle's start: the names the journal's unfinished rows hold. */
  async beginCycle(): Promise<void> {
    this.reserved = await this.ctx.journal.reservedPaths();
  }

  /** At a cycle's end: the inbox root is let go (a share can be mounted over it between cycles). */
  async endCycle(): Promise<void> {
    const root = this.root;
    this.root = undefined;
    await root?.then((h) => h.close()).catch(() => undefined);
  }

  /** A parcel confirmed or sent back to be downloaded again: its name is free for later parcels. */
  release(finalPath: string | null): void {
    if (finalPath === null) return;
    this.inFlightPaths.delete(finalPath);
    this.marked.delete(finalPath);
  }

  /** The final path from the template and the collision policy; never outside the inbox root. */
  async chooseFinalPath(row: InboundRow, fileName: string | null): Promise<string> {
    const fallback = `parcel-${row.parcel_id}`;
    const vars = {
      fileName: sanitizeFileName(fileName, fallback),
      parcelId: row.parcel_id,
      gridIdFrom: row.grid_id_from,
      gridIdTo: row.grid_id_to,
      // Decided here, once: the path is journalled with markStaged and never renamed afterwards.
      partner: this.usesPartner ? await this.ctx.partners.nameOf(row.grid_id_from) : null,
      mailboxId: this.ctx.mailboxId,
      date: new Date(this.ctx.now()).toISOString().slice(0, 10),
    };
    const rel = renderTemplate(this.ctx.inbox.nameTemplate, vars, fallback);
    const reserved = this.reserved;
    // Reserve a name synchronously, before any await: parcels downloading in parallel must never
    // pick the same name (two parcels named nul.txt once did in the soak, and the second rename
    // replaced the first file). A name found taken on disk is released again.
    const claim = async (p: string): Promise<boolean> => {
      if (reserved.has(p) || this.inFlightPaths.has(p)) return false;
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
    };
    const plain = resolveInside(this.ctx.inbox.dir, rel);
    // A redelivery always gets a name of its own: the ERP may still hold the first copy.
    if (row.delivery === 1) {
      if (await claim(plain)) return plain;
      if (this.ctx.inbox.collision === 'overwrite') {
        this.inFlightPaths.add(plain);
        return plain;
      }
      if (this.ctx.inbox.collision === 'fail') throw new GridNameCollisionError(plain);
    }
    const tag = row.delivery > 1 ? `${row.parcel_id}-${row.delivery}` : String(row.parcel_id);
    for (let n = 1; ; n++) {
      const candidate = resolveInside(
        this.ctx.inbox.dir,
        path.join(path.dirname(rel), uniqueVariant(path.basename(rel), n === 1 ? tag : `${tag}-${n}`)),
      );
      if (await claim(candidate)) return candidate;
    }
  }

  /**
   * staged → placed: rename the fsynced .part to its final name, fsync the directory, journal
   * `placed`. The inbox is written to by others: its sub-folders are walked one component at a time
   * without following a link (a folder swapped for a symlink would carry the parcel elsewhere), and
   * the rename resolves against the folder's descriptor, not its path. The done marker comes after
   * (`mark`).
   */
  async place(row: InboundRow, part: string): Promise<void> {
    const final = row.final_path as string;
    await this.inFolderOf(final, 'cannot place', async (dir, name) => {
      if (await this.ctx.calls().exists(part)) {
        if (this.ctx.inbox.collision === 'fail' && (await this.ctx.calls().exists(dir.at(name)))) throw new GridNameCollisionError(final);
        if (this.ctx.inbox.gid !== undefined) await fs.promises.chown(part, -1, this.ctx.inbox.gid);
        if (this.ctx.inbox.fileMode !== undefined) await fs.promises.chmod(part, this.ctx.inbox.fileMode);
        const to = dir.at(name);
        // A stale owner (lease lost) renames nothing. One frozen right here and woken later is
        // harmless: the new owner renames this same staging file (the journalled path), so only
        // one rename of it can succeed; the late one finds it gone.
        this.ctx.lease.assertMayAct();
        pausePoint('in.before-rename');
        await this.ctx.calls().rename(part, to);
        crashPoint('in.renamed');
        await Promise.all([dir.sync(), fsyncDir(path.dirname(part))]);
      } else if (await holdsContent(dir.at(name), { bytes: row.bytes, sha256: row.sha256 })) {
        // No .part, and the final file holds the staged content: renamed before a crash that may
        // have come before the directory's fsync.
        await dir.sync();
      } else {
        throw new StagingLostError(part, final);
      }
    });
    await this.ctx.journal.markPlaced(this.ctx.mailboxId, row.parcel_id);
    crashPoint('in.placed');
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
    await this.inFolderOf(final, 'cannot write the done marker of', async (dir, name) => {
      if (await this.ctx.calls().exists(dir.at(name))) {
        this.ctx.lease.assertMayAct();
        await this.writeMarker(dir, name + this.ctx.inbox.doneSuffix);
        crashPoint('in.marked');
      }
    });
    this.marked.add(final);
  }

  /**
   * Runs a step in the folder of a final path. Sub-folders are walked again for each parcel (one
   * may have been swapped for a link since); a file call's failure defers the parcel, named by the
   * folder's real path, never its descriptor path.
   */
  private async inFolderOf(final: string, what: string, step: (dir: DirHandle, name: string) => Promise<void>): Promise<void> {
    const rel = path.relative(this.ctx.inbox.dir, path.dirname(final));
    let own: DirHandle | undefined;
    let dir: DirHandle | undefined;
    try {
      dir = rel === '' ? await this.heldRoot() : (own = await openDirInside(this.ctx.inbox.dir, rel, { create: true }));
      await step(dir, path.basename(final));
    } catch (err) {
      if (err instanceof GridNameCollisionError || err instanceof StagingLostError || err instanceof JournalLeaseLostError) throw err;
      throw new DeferError(`${what} ${final}: ${dir?.shown((err as Error).message) ?? (err as Error).message}`);
    } finally {
      await own?.close();
    }
  }

  /** The inbox root, opened once per cycle and shared by its parcels. */
  private heldRoot(): Promise<DirHandle> {
    let dir = this.root;
    if (!dir) {
      const opening = openDirInside(this.ctx.inbox.dir, '', { create: true });
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
