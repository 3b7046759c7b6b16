/**
 * Retention: finished journal rows and events after retention.journalDays (sent rows longer when a
 * duplicate window asks for it), and failed rows once what they guard is gone too
 * (./retention-failed.ts); sentDir and errorDir (off unless configured): regular files older than
 * N days by mtime are deleted, in sub-folders too (sentTemplate may create them). Symlinks and
 * anything that is not a regular file are never followed nor deleted; an error report goes with
 * its file, or alone once its file is gone. When a pass runs: ./retention-pass.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { errorFields } from '../errors/index.js';
import { InboundJournal, OutboundJournal } from '../journal/index.js';
import { ERROR_REPORT_SUFFIX } from '../outbound/index.js';
import { errorFileGone, pruneFailedInbound, pruneInErrorOutbound, type PendingLister } from './retention-failed.js';
import type { DaemonConfig, DaemonRuntime } from './runtime.js';

const DAY_MS = 86_400_000;

/**
 * The retention pass: old archived and failed files, then old journal rows and events. The folders
 * go first: an in_error row may go once errorRetentionDays took its file. A stop ends it between
 * parts.
 */
export async function pruneAll(rt: DaemonRuntime, service: PendingLister): Promise<void> {
  await pruneFolders(rt);
  const olderThanMs = rt.config.retention.journalDays * DAY_MS;
  const prunes = {
    inbound: () => new InboundJournal(rt.journal).pruneConfirmed(olderThanMs),
    outbound: () => new OutboundJournal(rt.journal).pruneFinished(sentRowsKeptMs(rt.config)),
    inError: () => pruneInErrorOutbound(rt, olderThanMs),
    events: () => rt.journal.pruneEvents(olderThanMs),
    // Last: it may wait for the service (one pending list per mailbox holding old failed rows).
    failed: () => pruneFailedInbound(rt, service, olderThanMs),
  };
  const pruned = { inbound: 0, outbound: 0, inError: 0, events: 0, failed: 0 };
  // Each part on its own: one that fails (the database busy, a timeout) must not stop the others.
  for (const part of ['inbound', 'outbound', 'inError', 'events', 'failed'] as const) {
    if (rt.signal.aborted) break;
    try {
      pruned[part] = await prunes[part]();
    } catch (err) {
      rt.logger.warn({ ...errorFields(err), part }, 'journal pruning failed');
    }
  }
  const rows = pruned.inbound + pruned.outbound + pruned.inError + pruned.failed;
  if (rows + pruned.events > 0)
    rt.logger.info(
      { rows, failed: pruned.failed, inError: pruned.inError, events: pruned.events, olderThanDays: rt.config.retention.journalDays },
      'journal pruned',
    );
}

/**
 * How long sent (and requeued) rows stay: journalDays, or the longest duplicate window of an outbox
 * that rejects duplicates, whichever is longer. The duplicate check looks for the content among
 * these rows: one pruned inside the window would let a duplicate out as new.
 */
export function sentRowsKeptMs(cfg: Pick<DaemonConfig, 'retention' | 'mailboxes'>): number {
  const windows = cfg.mailboxes.map((m) => (m.outbox?.duplicates === 'reject' ? m.outbox.duplicateWindowMs : 0));
  return Math.max(cfg.retention.journalDays * DAY_MS, ...windows);
}

/** sentRetentionDays / errorRetentionDays: delete old archived and failed files (off by default). */
async function pruneFolders(rt: DaemonRuntime): Promise<void> {
  for (const m of rt.config.mailboxes) {
    const o = m.outbox;
    if (!o) continue;
    const targets: [string | undefined, number | undefined][] = [
      [o.sentDir, o.sentRetentionDays],
      [o.errorDir, o.errorRetentionDays],
    ];
    for (const [dir, days] of targets) {
      if (!dir || !days) continue;
      const removed = await pruneFolder(
        dir,
        days * DAY_MS,
        rt.now(),
        (file, err) => rt.logger.warn({ file, ...errorFields(err) }, 'retention: cannot delete'),
        rt.signal,
      );
      if (removed) rt.logger.info({ dir, removed, olderThanDays: days }, 'retention: old files deleted');
    }
  }
}

/**
 * Deletes old regular files under `dir`, and the sub-folders it empties (a `{date}/` sentTemplate
 * makes one a day); returns how many files. Never throws for one file. Asynchronous and read entry
 * by entry: retention switched on over years of archive (a million files) must not hold the event
 * loop — lease renewals, health checks, transfers — for the whole walk; nor keep a stopping
 * process (`once` on SIGTERM) past its deadline: `signal` ends it between entries.
 */
export async function pruneFolder(
  dir: string,
  maxAgeMs: number,
  now: number,
  onError: (file: string, err: Error) => void,
  signal?: AbortSignal,
): Promise<number> {
  let removed = 0;
  const walk = async (d: string, depth: number): Promise<boolean> => {
    let folder: fs.Dir;
    try {
      folder = await fs.promises.opendir(d);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') onError(d, err as Error);
      return false;
    }
    let emptied = false;
    for await (const e of folder) {
      if (signal?.aborted) break;
      const p = path.join(d, e.name);
      if (e.isDirectory() && depth < 8 && (await walk(p, depth + 1))) {
        // Only a folder this pass emptied goes (one that still holds something stays, and so
        // does an empty folder someone made).
        try {
          await fs.promises.rmdir(p);
          emptied = true;
        } catch {
          // not empty
        }
      }
      if (!e.isFile()) continue;
      try {
        const st = await fs.promises.lstat(p);
        if (!st.isFile() || now - st.mtimeMs <= maxAgeMs) continue;
        const report = e.name.endsWith(ERROR_REPORT_SUFFIX);
        // A report goes with its file; alone only once that file is gone (deleted by an operator,
        // or a report that never had one: a vanished file, a copy removed from processing/).
        if (report && !(await errorFileGone(p.slice(0, -ERROR_REPORT_SUFFIX.length)))) continue;
        await fs.promises.rm(p);
        if (!report) await fs.promises.rm(`${p}${ERROR_REPORT_SUFFIX}`, { force: true });
        removed++;
        emptied = true;
      } catch (err) {
        // Gone meanwhile: a report taken with its file earlier in this walk, a file someone moved.
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') onError(p, err as Error);
      }
    }
    return emptied;
  };
  await walk(dir, 0);
  return removed;
}
