/**
 * The outbox's folder watch in `run` mode. It only makes a rescan come sooner; the rescan is what
 * is correct. A watch holds on to the folder it was started on — one inode — and a folder deleted
 * and made again at the same path (an ERP's clean-up, an operator's `rm -rf` and `mkdir`) is
 * another one, which the old watch never reports on: files dropped there waited for the periodic
 * rescan. So the watch is made again whenever the folder at the path is not the one watched
 * (device, inode and creation time): when the watch itself hints at it (its folder removed, an
 * error, an event about the folder's own name) and before every scan, which catches whatever the
 * hints missed.
 */
import fs from 'node:fs';
import path from 'node:path';
import chokidar, { type FSWatcher } from 'chokidar';
import { errorFields } from '../errors/index.js';
import type { Logger } from '../log.js';
import type { OutboxConfig } from './types.js';

/**
 * While the folder is gone, how often to look whether it is back: a stat each time. Without it the
 * folder made again would be noticed only at the next rescan (30 s by default).
 */
const MISSING_RETRY_MS = 1000;

/**
 * The folder's identity: the same path may name another folder later. Its inode number alone does
 * not tell them apart — a folder removed and made again at once is often given the freed number
 * again (ext4) — its creation time does (statx; 0 where the filesystem keeps none).
 */
interface FolderIdentity {
  readonly dev: bigint;
  readonly ino: bigint;
  readonly bornNs: bigint;
}

export class OutboxWatcher {
  private watcher: FSWatcher | undefined;
  private watched: FolderIdentity | undefined;
  private retry: NodeJS.Timeout | undefined;
  private checking: Promise<void> | undefined;
  private running = false;
  /** A folder was watched before: the one found now replaces it. */
  private opened = false;

  /** `onChange` asks for a scan: a file came or changed, or a folder made again is watched (files may be in it already). */
  constructor(
    private readonly cfg: Pick<OutboxConfig, 'dir' | 'usePolling'>,
    private readonly isIgnored: (name: string) => boolean,
    private readonly logger: Logger,
    private readonly onChange: () => void,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    void this.verify();
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.retry) clearTimeout(this.retry);
    this.retry = undefined;
    await this.checking;
    await this.close();
  }

  /**
   * Watches the folder now at the path, unless it is the one watched already. Resolves once
   * decided; concurrent calls share one look. Never rejects: a folder that cannot be watched is
   * left to the rescan.
   */
  verify(): Promise<void> {
    if (!this.running) return Promise.resolve();
    this.checking ??= this.check()
      .catch((err: unknown) => this.logger.warn({ ...errorFields(err) }, 'cannot watch the outbox folder; the periodic rescan continues'))
      .finally(() => (this.checking = undefined));
    return this.checking;
  }

  private async check(): Promise<void> {
    // Read before the watch starts: a folder replaced in between then differs at the next look,
    // and is watched again, instead of passing for the one watched.
    const found = await identityOf(this.cfg.dir);
    if (found && this.watched && sameFolder(found, this.watched)) return;
    await this.close();
    if (!this.running) return;
    if (!found) {
      if (this.retry) clearTimeout(this.retry);
      this.retry = setTimeout(() => {
        this.retry = undefined;
        void this.verify();
      }, MISSING_RETRY_MS);
      return;
    }
    if (this.opened) this.logger.info({ dir: this.cfg.dir }, 'the outbox folder was made again: watching the new one');
    this.open(found);
  }

  private open(identity: FolderIdentity): void {
    const root = path.resolve(this.cfg.dir);
    const watcher = chokidar.watch(this.cfg.dir, {
      depth: 0,
      ignoreInitial: true,
      usePolling: this.cfg.usePolling,
      // chokidar 5 also asks about the root itself: never ignore it, or nothing is watched.
      ignored: (p: string) => path.resolve(p) !== root && this.isIgnored(path.basename(p)),
    });
    watcher.on('add', () => this.onChange());
    watcher.on('change', () => this.onChange());
    watcher.on('unlinkDir', (p: string) => {
      if (path.resolve(p) === root) void this.verify();
    });
    // With fs.watch, a folder removed and made again at once gives no unlinkDir (the path exists
    // when chokidar looks): only a raw event names the folder itself.
    watcher.on('raw', (_event, name, details) => {
      const watchedPath = (details as { watchedPath?: unknown } | undefined)?.watchedPath;
      if (name === path.basename(root) && typeof watchedPath === 'string' && path.resolve(watchedPath) === root) void this.verify();
    });
    watcher.on('error', (err) => {
      this.logger.warn({ ...errorFields(err) }, 'outbox watcher error; the periodic rescan continues');
      void this.verify();
    });
    // A folder made again may hold files already: one scan once the new watch sees what comes after.
    if (this.opened) watcher.once('ready', () => this.onChange());
    this.watcher = watcher;
    this.watched = identity;
    this.opened = true;
  }

  private async close(): Promise<void> {
    const watcher = this.watcher;
    this.watcher = undefined;
    this.watched = undefined;
    await watcher?.close();
  }
}

/** The folder at `dir` (a link to one is followed, as the watch follows it); undefined when there is none. */
async function identityOf(dir: string): Promise<FolderIdentity | undefined> {
  try {
    const st = await fs.promises.stat(dir, { bigint: true });
    return st.isDirectory() ? { dev: st.dev, ino: st.ino, bornNs: st.birthtimeNs } : undefined;
  } catch {
    return undefined;
  }
}

function sameFolder(a: FolderIdentity, b: FolderIdentity): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.bornNs === b.bornNs;
}
