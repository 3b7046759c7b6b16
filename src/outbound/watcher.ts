/**
 * The outbox's folder watch in `run` mode. It only makes a rescan come sooner; the rescan is what
 * is correct. A watch holds on to the folder it was started on — one inode — and a folder deleted
 * and made again at the same path (an ERP's clean-up, an operator's `rm -rf` and `mkdir`) is
 * another one, which the old watch never reports on: files dropped there waited for the periodic
 * rescan. So the watch is made again whenever the folder at the path is not the one watched
 * (device, inode and creation time): when the watch itself hints at it (an event about the
 * folder's own name, an error) and before every scan, which catches whatever the hints missed.
 *
 * One watch on the folder itself, never one per file: a watcher library that tracks every entry
 * (chokidar did) holds a watch and a listing row per file and reads the whole folder again after
 * events, one lstat per entry — with a month-end drop of 30,000 files that was ~120 MB and a
 * whole core while the claims moved them out (docs/performance.md).
 */
import fs from 'node:fs';
import path from 'node:path';
import { errorFields } from '../errors/index.js';
import type { Logger } from '../log.js';
import type { OutboxConfig } from './types.js';

/**
 * While the folder is gone, how often to look whether it is back: a stat each time. Without it the
 * folder made again would be noticed only at the next rescan (30 s by default).
 */
const MISSING_RETRY_MS = 1000;

/** With `usePolling`: how often the folder's own times are read (one stat; its entries are never polled). */
const POLL_MS = 100;

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
  /** Ends the watch in place, if any. */
  private unwatch: (() => void) | undefined;
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
    this.close();
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
    this.close();
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
    const dir = this.cfg.dir;
    if (this.cfg.usePolling) {
      // A share sends no events: the folder's own times change when an entry comes or goes, and a
      // poll of the path sees a folder made again (the scan's verify then moves the watch).
      const poll = (): void => this.onChange();
      fs.watchFile(dir, { interval: POLL_MS }, poll);
      this.unwatch = () => fs.unwatchFile(dir, poll);
    } else {
      const own = path.basename(path.resolve(dir));
      const watcher = fs.watch(dir, { encoding: 'buffer' }, (_event, name) => this.onEvent(own, name));
      watcher.on('error', (err) => {
        this.logger.warn({ ...errorFields(err) }, 'outbox watcher error; the periodic rescan continues');
        void this.verify();
      });
      this.unwatch = () => watcher.close();
    }
    this.watched = identity;
    // A folder made again may hold files already: one scan now that the new watch sees what comes after.
    if (this.opened) this.onChange();
    this.opened = true;
  }

  /**
   * An event names an entry that came, changed or went. Each claim moves a file out, and that is
   * an event too: only an entry still there asks for a scan (a scan lists the whole folder), as
   * chokidar's `add` and `change` did. The folder's own name is the hint that it was removed or
   * moved, and its watch with it.
   */
  private onEvent(own: string, name: Buffer | null): void {
    if (name === null) return this.onChange();
    const text = name.toString('utf8');
    if (text === own) void this.verify();
    if (this.isIgnored(text)) return;
    fs.lstat(Buffer.concat([Buffer.from(path.join(this.cfg.dir, '/')), name]), (err) => {
      if (!err) this.onChange();
    });
  }

  private close(): void {
    this.unwatch?.();
    this.unwatch = undefined;
    this.watched = undefined;
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
