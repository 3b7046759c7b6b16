/**
 * Finding and claiming finished files in an outbox folder. Detection is a rescan of the folder
 * checked against the journal; watcher events only make the rescan come sooner (they are lost on
 * network shares and while the daemon is down). A ready file is claimed: journalled, renamed into
 * processing/, hashed.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import chokidar, { type FSWatcher } from 'chokidar';
import { exists, fsyncDir } from '../files/index.js';
import { crashPoint } from '../journal/crash-points.js';
import type { OutboundRow } from '../journal/outbound.js';
import { StabilityTracker, ignoreMatcher } from './checks.js';
import type { Disposal } from './disposal.js';
import type { OutboxContext } from './types.js';

/** Files claimed together in one scan step. */
const CLAIM_BATCH = 32;

export class OutboxScanner {
  private readonly isIgnored: (name: string) => boolean;
  private readonly stability: StabilityTracker;
  private readonly reportedOdd = new Set<string>();
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private scanning: Promise<number> | undefined;
  private rescanSoon = false;
  private running = false;

  /** `onScanned` runs after each scan of `run` mode: the pipeline queues what was claimed. */
  constructor(
    private readonly ctx: OutboxContext,
    private readonly disposal: Disposal,
    private readonly onScanned: () => void,
  ) {
    this.isIgnored = ignoreMatcher([...ctx.cfg.ignore, `*${ctx.cfg.markerSuffix}`, '*.error.json']);
    this.stability = new StabilityTracker(ctx.cfg.stableMs);
  }

  /** `run` mode: watch the folder and rescan periodically until `stop`. */
  start(): void {
    if (this.running) return;
    this.running = true;
    const { cfg, logger } = this.ctx;
    this.watcher = chokidar.watch(cfg.dir, {
      depth: 0,
      ignoreInitial: true,
      usePolling: cfg.usePolling,
      // chokidar 5 also asks about the root itself: never ignore it, or nothing is watched.
      ignored: (p: string) => path.resolve(p) !== path.resolve(cfg.dir) && this.isIgnored(path.basename(p)),
    });
    this.watcher.on('add', () => this.kick());
    this.watcher.on('change', () => this.kick());
    this.watcher.on('error', (err) => logger.warn({ err: (err as Error).message }, 'outbox watcher error; the periodic rescan continues'));
    this.kick();
  }

  /** Stops watching; resolves once a scan in progress has finished. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.watcher?.close();
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
      this.onScanned();
      if (w > 0) wait = Math.min(wait, w + 5);
    } catch (err) {
      this.ctx.logger.warn({ err: (err as Error).message }, 'outbox scan failed; retrying');
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
    const { cfg, logger } = this.ctx;
    let entries: fs.Dirent[];
    try {
      entries = await fs.promises.readdir(cfg.dir, { withFileTypes: true });
    } catch (err) {
      logger.error({ err: (err as Error).message }, 'cannot list the outbox folder');
      return cfg.rescanMs;
    }
    const names = new Set(entries.map((e) => e.name));
    this.stability.retainOnly(names);
    let wait = 0;
    const readyFiles: [string, string][] = [];
    for (const e of entries) {
      if (this.isIgnored(e.name)) continue;
      if (!e.isFile()) {
        // Symlinks are never followed, FIFOs never opened, directories left alone: report once.
        if (!this.reportedOdd.has(e.name)) {
          this.reportedOdd.add(e.name);
          logger.warn({ file: e.name }, 'outbox entry is not a regular file; left alone');
        }
        continue;
      }
      const source = path.join(cfg.dir, e.name);
      let ready: number;
      if (cfg.readiness === 'marker') {
        ready = names.has(e.name + cfg.markerSuffix) ? 0 : -1;
      } else {
        let st: fs.Stats;
        try {
          st = await fs.promises.lstat(source);
        } catch {
          continue;
        }
        ready = this.stability.observe(e.name, { size: st.size, mtimeMs: st.mtimeMs }, this.ctx.now());
      }
      if (ready > 0) wait = wait === 0 ? ready : Math.min(wait, ready);
      if (ready !== 0) continue;
      this.stability.forget(e.name);
      readyFiles.push([e.name, source]);
    }
    // Claims run in groups so that their journal commits share one fsync (group commit), but
    // not all at once: each claim opens its file to hash it, and a drop of thousands of files
    // must not run into the descriptor limit.
    for (let i = 0; i < readyFiles.length; i += CLAIM_BATCH) {
      await Promise.all(readyFiles.slice(i, i + CLAIM_BATCH).map(([name, src]) => this.claim(name, src)));
    }
    return wait;
  }

  /** claiming (journal) → rename into processing → claimed (size, sha256). */
  private async claim(fileName: string, source: string): Promise<void> {
    let row: OutboundRow;
    try {
      row = await this.ctx.journal.markClaiming(this.ctx.mailboxId, this.ctx.cfg.dir, fileName, source, this.ctx.processingDir);
    } catch (err) {
      this.ctx.logger.error({ file: fileName, err: (err as Error).message }, 'cannot journal the claim; will retry');
      return;
    }
    crashPoint('out.claiming');
    await this.finishClaim(row);
  }

  /** Completes a claim journalled as `claiming` (also after a crash). */
  async finishClaim(row: OutboundRow): Promise<void> {
    const { cfg, journal, logger } = this.ctx;
    const processing = row.processing_path as string;
    try {
      if (await exists(row.source_path)) {
        await fs.promises.rename(row.source_path, processing);
        crashPoint('out.claim-renamed');
        await fsyncDir(path.dirname(processing));
        await fsyncDir(path.dirname(row.source_path));
        if (cfg.readiness === 'marker') await fs.promises.rm(row.source_path + cfg.markerSuffix, { force: true });
      } else if (!(await exists(processing))) {
        this.ctx.tally('failed');
        await this.disposal.toError(row, { reason: 'the file vanished from the outbox before it could be claimed' });
        return;
      }
      const { bytes, sha256 } = await hashFile(processing);
      await journal.markClaimed(row.id, bytes, sha256);
      this.ctx.tally('claimed');
      crashPoint('out.claimed');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? '';
      if (code === 'EACCES' || code === 'EPERM') {
        this.ctx.tally('failed');
        await this.disposal.toError(row, { reason: `unreadable: ${(err as Error).message}` });
        return;
      }
      logger.warn({ file: row.file_name, err: (err as Error).message }, 'claim interrupted; will finish it later');
      journal.noteError(row.id, (err as Error).message);
    }
  }
}

async function hashFile(file: string): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of fs.createReadStream(file)) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { bytes, sha256: hash.digest('hex') };
}
