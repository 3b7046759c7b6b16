/**
 * Retention: finished journal rows and events after retention.journalDays; sentDir and errorDir
 * (off unless configured): regular files older than N days by
 * mtime are deleted, in sub-folders too (sentTemplate may create them). Symlinks and anything that
 * is not a regular file are never followed nor deleted; an error report goes with its file.
 */
import fs from 'node:fs';
import path from 'node:path';
import { errorFields } from '../errors/index.js';
import { InboundJournal, OutboundJournal } from '../journal/index.js';
import type { DaemonRuntime } from './runtime.js';

const DAY_MS = 86_400_000;

/** The daily retention pass of `run`: old archived and failed files, then finished journal rows and events. */
export async function pruneAll(rt: DaemonRuntime): Promise<void> {
  pruneFolders(rt);
  const olderThanMs = rt.config.retention.journalDays * DAY_MS;
  const prunes = {
    inbound: () => new InboundJournal(rt.journal).pruneConfirmed(olderThanMs),
    outbound: () => new OutboundJournal(rt.journal).pruneFinished(olderThanMs),
    events: () => rt.journal.pruneEvents(olderThanMs),
  };
  const pruned = { inbound: 0, outbound: 0, events: 0 };
  // Each part on its own: one that fails (the database busy, a timeout) must not stop the others.
  for (const part of ['inbound', 'outbound', 'events'] as const) {
    try {
      pruned[part] = await prunes[part]();
    } catch (err) {
      rt.logger.warn({ ...errorFields(err), part }, 'journal pruning failed');
    }
  }
  const rows = pruned.inbound + pruned.outbound;
  if (rows + pruned.events > 0)
    rt.logger.info({ rows, events: pruned.events, olderThanDays: rt.config.retention.journalDays }, 'journal pruned');
}

/** sentRetentionDays / errorRetentionDays: delete old archived and failed files (off by default). */
function pruneFolders(rt: DaemonRuntime): void {
  for (const m of rt.config.mailboxes) {
    const o = m.outbox;
    if (!o) continue;
    const targets: [string | undefined, number | undefined][] = [
      [o.sentDir, o.sentRetentionDays],
      [o.errorDir, o.errorRetentionDays],
    ];
    for (const [dir, days] of targets) {
      if (!dir || !days) continue;
      const removed = pruneFolder(dir, days * DAY_MS, rt.now(), (file, err) =>
        rt.logger.warn({ file, ...errorFields(err) }, 'retention: cannot delete'),
      );
      if (removed) rt.logger.info({ dir, removed, olderThanDays: days }, 'retention: old files deleted');
    }
  }
}

/** Deletes old regular files under `dir`; returns how many. Never throws for one file. */
export function pruneFolder(dir: string, maxAgeMs: number, now: number, onError: (file: string, err: Error) => void): number {
  let removed = 0;
  const walk = (d: string, depth: number): void => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') onError(d, err as Error);
      return;
    }
    for (const e of entries) {
      const p = path.join(d, e.name);
      if (e.isDirectory() && depth < 8) walk(p, depth + 1);
      if (!e.isFile() || e.name.endsWith('.error.json')) continue;
      try {
        const st = fs.lstatSync(p);
        if (!st.isFile() || now - st.mtimeMs <= maxAgeMs) continue;
        fs.rmSync(p);
        fs.rmSync(`${p}.error.json`, { force: true });
        removed++;
      } catch (err) {
        onError(p, err as Error);
      }
    }
  };
  walk(dir, 0);
  return removed;
}
