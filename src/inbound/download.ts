/**
 * The download of one parcel in two halves: the network half (free room checked, the content
 * received into its staging file) runs in a download slot; the local half (the staging file made
 * durable, its final name chosen, `staged` journalled) runs after the slot is freed.
 */
import path from 'node:path';
import { DownloadRoomError } from '../api/index.js';
import { DEFAULTS } from '../config/defaults.js';
import { FileCalls, freeBytes } from '../files/index.js';
import { crashPoint, type InboundRow } from '../journal/index.js';
import { DeferError, DISK_ERRORS } from './errors.js';
import type { InboxPlacement } from './placement.js';
import { StagingFile } from './staging-file.js';
import { stagingName } from './staging-names.js';
import type { InboundContext } from './types.js';

/** A download received, not yet durable. */
export interface Fetched {
  readonly part: string;
  readonly target: StagingFile;
  readonly info: Awaited<ReturnType<InboundContext['client']['downloadParcel']>>;
}

export class ParcelDownload {
  /** Cheap file calls on this thread when staging and inbox are on local filesystems (files/calls). */
  private calls = FileCalls.POOL;
  /**
   * Free bytes in staging as last measured, less what every download started since may write (its
   * declared size, or all the room it was given when none was declared): one statfs per cycle
   * instead of one per parcel (measured again when it runs short).
   */
  private spaceLeft: number | undefined;

  constructor(
    private readonly ctx: InboundContext,
    private readonly placement: InboxPlacement,
  ) {}

  /** At the start of a cycle's work: free room measured afresh, file calls as the filesystems allow now. */
  beginCycle(calls: FileCalls): void {
    this.spaceLeft = undefined;
    this.calls = calls;
  }

  /** The file calls decided for the cycle under way (placement uses the same). */
  fileCalls(): FileCalls {
    return this.calls;
  }

  /**
   * Under a shared journal the name carries the lease's token: a stale owner still writing its
   * download never writes into the file the new owner verified and is about to place.
   */
  stagingPath(parcelId: number): string {
    return path.join(this.ctx.stagingDir, stagingName(this.ctx.mailboxId, parcelId, this.ctx.lease.token()));
  }

  /** The network half of a download: the content received into its staging target (not yet durable). */
  async fetch(row: InboundRow, signal?: AbortSignal): Promise<Fetched> {
    const { inbox, stagingDir } = this.ctx;
    const declared = row.declared_bytes ?? 0;
    const margin = inbox.minFreeBytes ?? DEFAULTS.inbox.minFreeBytes;
    const need = declared + margin;
    if (this.spaceLeft === undefined || this.spaceLeft < need) this.spaceLeft = await freeBytes(stagingDir);
    // The declared size only refuses early; the room holds on the bytes that actually arrive.
    if (this.spaceLeft < need) throw new DeferError(`not enough free space in ${stagingDir}: ${this.spaceLeft} bytes free, ${need} needed`);
    const roomBytes = this.spaceLeft - margin;
    this.spaceLeft -= row.declared_bytes ?? roomBytes;
    this.ctx.lease.assertMayAct();
    // No journal write before the download: a crash during it leaves the row `listed` and the
    // next attempt rewrites the .part from the start (its path follows from the parcel id).
    const part = this.stagingPath(row.parcel_id);
    const target = new StagingFile(part, inbox.fileMode ?? DEFAULTS.fileMode, this.calls);
    try {
      const info = await this.ctx.client.downloadParcel(row.parcel_id, target, {
        ...(row.declared_bytes !== null ? { expectedBytes: row.declared_bytes } : {}),
        roomBytes,
        ...(signal ? { signal } : {}),
        onProgress: (bytes) => this.ctx.events.emit('inbound:transferring', { mailbox: this.ctx.mailbox, parcelId: row.parcel_id, bytes }),
      });
      return { part, target, info };
    } catch (err) {
      throw await this.discarded(target, part, err);
    }
  }

  /** The local half: the staging file made durable, its final name chosen, `staged` journalled. */
  async stage(row: InboundRow, { part, target, info }: Fetched, signal?: AbortSignal): Promise<void> {
    try {
      await target.finish();
    } catch (err) {
      throw await this.discarded(target, part, err);
    }
    crashPoint('in.downloaded');
    const fileName = info.fileName ?? row.file_name;
    const finalPath = await this.placement.chooseFinalPath(row, fileName, signal);
    try {
      await this.ctx.journal.markStaged(this.ctx.mailboxId, row.parcel_id, {
        stagingPath: part,
        bytes: info.bytes,
        sha256: info.sha256,
        finalPath,
        fileName,
      });
    } catch (err) {
      // The row stays `listed`, without the name: the next attempt chooses again. (Had the commit
      // landed after all, the name is the journal's: each cycle reserves the staged rows' names.)
      this.placement.release(finalPath);
      throw err;
    }
    crashPoint('in.staged');
  }

  /** Drops a failed attempt's staging file; a full or unwritable disk defers the parcel instead of failing it. */
  private async discarded(target: StagingFile, part: string, err: unknown): Promise<unknown> {
    await target.discardAttempt();
    if (DISK_ERRORS.has((err as NodeJS.ErrnoException).code ?? ''))
      return new DeferError(`cannot write ${part}: ${(err as Error).message}`);
    if (err instanceof DownloadRoomError) {
      const margin = this.ctx.inbox.minFreeBytes ?? DEFAULTS.inbox.minFreeBytes;
      return new DeferError(`not enough free space in ${this.ctx.stagingDir}: ${err.message} (inbox.minFreeBytes ${margin})`, {
        cause: err,
      });
    }
    return err;
  }
}
