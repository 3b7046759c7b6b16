/**
 * Where the outbox path leads. Whoever can write the folder that holds the outbox can swap the
 * outbox, or a folder above it, for a link to another directory — gridsync's state directory (the
 * journal, the callback secrets) or any other it can read: every file there would be claimed out
 * of it, uploaded, or put into errorDir where the ERP reads it. So the place the path led at the
 * first scan is kept, and a path that leads elsewhere later is not scanned (told once, and once
 * when it leads back). A folder made again at the path (rm, mkdir) leads to the same place.
 */
import fs from 'node:fs';
import { GridsyncError, TroubleLog, type TroubleLogger } from '../errors/index.js';

export class OutboxElsewhereError extends GridsyncError {
  readonly code = 'OUTBOUND_FOLDER_ELSEWHERE';
  constructor(
    readonly dir: string,
    readonly leadsTo: string,
    readonly ledTo: string,
  ) {
    super(
      `the outbox path ${dir} now leads to ${leadsTo}, not to ${ledTo} as when the daemon started (a folder swapped for a link?): not scanned`,
    );
  }
}

export class OutboxHome {
  private home: string | undefined;
  private readonly elsewhere: TroubleLog;

  constructor(
    private readonly dir: string,
    logger: TroubleLogger,
    now: () => number,
  ) {
    this.elsewhere = new TroubleLog({
      logger,
      level: 'error',
      started: 'the outbox path leads to another directory; nothing is claimed there',
      ended: 'the outbox path leads to the outbox again',
      now,
    });
  }

  /** Whether the path still leads where it led at the first look; a missing folder is left to the listing to report. */
  async isHome(): Promise<boolean> {
    let real: string;
    try {
      real = await fs.promises.realpath(this.dir);
    } catch {
      return true;
    }
    this.home ??= real;
    if (real === this.home) {
      this.elsewhere.ok();
      return true;
    }
    this.elsewhere.failed(new OutboxElsewhereError(this.dir, real, this.home));
    return false;
  }
}
