/**
 * Progress of `once` and `run`: what a long transfer is doing, per mailbox and direction. On a
 * terminal a block of live lines redrawn in place (items done/total, bytes, rate, ETA) and a
 * summary table at the end; elsewhere (journald, a cron mail) one log line at most every
 * PROGRESS_LOG_INTERVAL_MS. Formatting is pure; the view only decides when and where to write.
 */
import type { ProgressRow } from '../daemon/index.js';
import { printable } from './print.js';

export type { ProgressRow };

export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${v} B` : `${v.toFixed(v < 10 ? 1 : 0)} ${units[u]}`;
}

export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** Rate and ETA of one row; ETA by bytes when the total is known, else by items. */
export function rates(r: ProgressRow, now: number): { itemsPerSec: number; bytesPerSec: number; etaMs: number | undefined } {
  const secs = Math.max((now - r.startedAt) / 1000, 0.001);
  const itemsPerSec = r.done / secs;
  const bytesPerSec = r.bytes / secs;
  let etaMs: number | undefined;
  if (r.totalBytes && r.bytes > 0 && r.totalBytes > r.bytes) etaMs = ((r.totalBytes - r.bytes) / bytesPerSec) * 1000;
  else if (r.done > 0 && r.total > r.done) etaMs = ((r.total - r.done) / itemsPerSec) * 1000;
  else if (r.total === r.done) etaMs = 0;
  return { itemsPerSec, bytesPerSec, etaMs };
}

/** One progress log line's rows (journald, a cron mail): counts, rate and, while work is left, ETA. */
export function progressLogFields(rows: readonly ProgressRow[], now: number): Record<string, string | number>[] {
  return rows.map((r) => {
    const { itemsPerSec, bytesPerSec, etaMs } = rates(r, now);
    return {
      mailbox: r.mailbox,
      direction: r.direction,
      done: r.done,
      total: r.total,
      bytes: r.bytes,
      failed: r.failed,
      deferred: r.deferred,
      itemsPerSec: Number(itemsPerSec.toFixed(2)),
      bytesPerSec: Math.round(bytesPerSec),
      ...(etaMs !== undefined ? { eta: formatDuration(etaMs), etaSeconds: Math.round(etaMs / 1000) } : {}),
    };
  });
}

/** `mb1001 out   12/40 items  1.2 MiB  3.4 items/s 280 KiB/s  ETA 8s  (1 failed)` */
export function formatProgressLine(r: ProgressRow, now: number, width = 12): string {
  const { itemsPerSec, bytesPerSec, etaMs } = rates(r, now);
  const parts = [
    `${r.mailbox.padEnd(width)} ${r.direction === 'in' ? 'in ' : 'out'}`,
    `${String(r.done).padStart(6)}/${String(r.total).padEnd(6)} items`,
    `${formatBytes(r.bytes).padStart(9)}${r.totalBytes ? ` of ${formatBytes(r.totalBytes)}` : ''}`,
    `${itemsPerSec.toFixed(1)} items/s ${formatBytes(Math.round(bytesPerSec))}/s`,
    `ETA ${etaMs === undefined ? '?' : formatDuration(etaMs)}`,
  ];
  const extra = [r.failed ? `${r.failed} failed` : '', r.deferred ? `${r.deferred} deferred` : ''].filter(Boolean).join(', ');
  return `${parts.join('  ')}${extra ? `  (${extra})` : ''}`;
}

/** The table printed when a run ends. */
export function summaryTable(rows: readonly ProgressRow[], now: number): string {
  const head = ['mailbox', 'dir', 'done', 'failed', 'deferred', 'bytes', 'time', 'rate'];
  const body = rows.map((r) => {
    const { bytesPerSec, itemsPerSec } = rates(r, now);
    return [
      r.mailbox,
      r.direction,
      String(r.done),
      String(r.failed),
      String(r.deferred),
      formatBytes(r.bytes),
      formatDuration(now - r.startedAt),
      `${itemsPerSec.toFixed(1)}/s ${formatBytes(Math.round(bytesPerSec))}/s`,
    ];
  });
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] ?? '').length)));
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => (i >= 2 && i <= 5 ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(head), line(widths.map((w) => '─'.repeat(w))), ...body.map(line)].join('\n');
}

export interface ProgressSink {
  write(text: string): void;
}

export const PROGRESS_LOG_INTERVAL_MS = 10_000;

/**
 * Decides when to show progress. `tty`: redraw the block in place on every tick. Otherwise: hand a
 * snapshot to `log` at most every `logIntervalMs`, and only when something changed.
 */
export class ProgressView {
  private drawnLines = 0;
  private lastLogAt: number;
  private lastLogged = '';

  constructor(
    private readonly opts: {
      readonly tty: boolean;
      readonly out: ProgressSink;
      readonly log: (rows: ProgressRow[]) => void;
      readonly now?: () => number;
      readonly logIntervalMs?: number;
    },
  ) {
    this.lastLogAt = (opts.now ?? Date.now)();
  }

  private get now(): number {
    return (this.opts.now ?? Date.now)();
  }

  tick(rows: ProgressRow[]): void {
    const now = this.now;
    if (this.opts.tty) {
      const width = Math.max(6, ...rows.map((r) => r.mailbox.length));
      const lines = rows.map((r) => formatProgressLine(r, now, width));
      const up = this.drawnLines > 0 ? `\x1b[${this.drawnLines}A` : '';
      // Only the cursor moves are ours: the lines (mailbox names) are printed escaped.
      this.opts.out.write(`${up}${lines.map((l) => `\r\x1b[K${printable(l)}\n`).join('')}`);
      this.drawnLines = lines.length;
      return;
    }
    const key = JSON.stringify(rows.map((r) => [r.done, r.total, r.bytes, r.failed, r.deferred]));
    // Nothing taken on since the start is no progress: a daemon that found nothing to do logged a
    // line of zeros ten seconds after each start.
    if (this.lastLogged === '' && rows.every((r) => r.total === 0)) this.lastLogged = key;
    if (now - this.lastLogAt < (this.opts.logIntervalMs ?? PROGRESS_LOG_INTERVAL_MS) || key === this.lastLogged) return;
    this.lastLogAt = now;
    this.lastLogged = key;
    this.opts.log(rows);
  }

  /** Final state: the live block replaced by the summary table (terminal only). */
  finish(rows: ProgressRow[]): void {
    if (!this.opts.tty) return;
    const up = this.drawnLines > 0 ? `\x1b[${this.drawnLines}A\r\x1b[J` : '';
    this.opts.out.write(`${up}${printable(summaryTable(rows, this.now))}\n`);
    this.drawnLines = 0;
  }
}
