/**
 * Where a shared folder's path leads: the inbox, the outbox, sentDir, errorDir. Whoever can write
 * the folder that holds one can swap it, or a folder above it, for a link to another directory.
 * Through a swapped outbox the files of that directory (gridsync's state directory: the journal,
 * the callback secrets) would be claimed out of it, uploaded, or put where the ERP reads errorDir;
 * through a swapped inbox, sentDir or errorDir, files named by a partner or the ERP would be
 * written into any directory gridsync can write. So the place a path led at its first use is kept, and a path that
 * leads elsewhere later is not used (told once, and once when it leads back). A folder made again
 * at the path (rm, mkdir) leads to the same place.
 */
import fs from 'node:fs';
import { GridsyncError, TroubleLog, type TroubleLogger } from '../errors/index.js';
import { openDirInside, type DirHandle } from './safe-open.js';

export class FolderElsewhereError extends GridsyncError {
  readonly code = 'FILES_FOLDER_ELSEWHERE';
  constructor(
    readonly dir: string,
    readonly leadsTo: string,
    readonly ledTo: string,
  ) {
    super(`the path ${dir} now leads to ${leadsTo}, not to ${ledTo} as when it was first used (a folder swapped for a link?): not used`);
  }
}

export class FolderHome {
  private home: string | undefined;
  private readonly elsewhere: TroubleLog;

  constructor(
    private readonly dir: string,
    /** `the inbox`, `the outbox`, `sentDir`, `errorDir`: for the log lines. */
    label: string,
    logger: TroubleLogger,
    now: () => number,
  ) {
    this.elsewhere = new TroubleLog({
      logger,
      level: 'error',
      started: `the path of ${label} leads to another directory; nothing is read or written there`,
      ended: `the path of ${label} leads to its folder again`,
      now,
    });
  }

  /**
   * The folder held open, checked on its descriptor: names resolved through the handle stay in it
   * whatever is swapped in at the path afterwards, so a check and the moves that follow it cannot
   * be split by a swap. Undefined when the path leads elsewhere (told once).
   */
  async open(): Promise<DirHandle | undefined> {
    const dir = await openDirInside(this.dir, '');
    try {
      if (this.judge(await dir.location())) return dir;
    } catch (err) {
      await dir.close();
      throw err;
    }
    await dir.close();
    return undefined;
  }

  /** As `open`, throwing FolderElsewhereError when the path leads elsewhere. */
  async mustOpen(): Promise<DirHandle> {
    const dir = await this.open();
    if (dir) return dir;
    throw await this.elsewhereNow();
  }

  private judge(real: string): boolean {
    this.home ??= real;
    if (real === this.home) {
      this.elsewhere.ok();
      return true;
    }
    this.elsewhere.failed(new FolderElsewhereError(this.dir, real, this.home));
    return false;
  }

  private async elsewhereNow(): Promise<FolderElsewhereError> {
    return new FolderElsewhereError(this.dir, await fs.promises.realpath(this.dir).catch(() => '?'), this.home ?? '?');
  }
}
