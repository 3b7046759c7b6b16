// The progress display's decisions: numbers, rate and ETA per line, the summary table, the redraw
// on a terminal, and at most one log line per 10 s (only when something moved) elsewhere.
import { describe, expect, it } from 'vitest';
import {
  formatBytes,
  formatDuration,
  formatProgressLine,
  progressLogFields,
  ProgressView,
  summaryTable,
  type ProgressRow,
} from '../../../src/cli/progress.js';

const row = (over: Partial<ProgressRow> = {}): ProgressRow => ({
  mailbox: 'mb1001',
  direction: 'out',
  done: 30,
  total: 120,
  failed: 0,
  deferred: 0,
  bytes: 3 * 1024 * 1024,
  startedAt: 0,
  ...over,
});

describe('progress lines', () => {
  it('items done/total, bytes, rate and an ETA by items', () => {
    // 30 of 120 in 10 s: 3 items/s, 90 left → 30 s.
    const line = formatProgressLine(row(), 10_000);
    expect(line).toMatch(/^mb1001 +out +30\/120 +items +3\.0 MiB +3\.0 items\/s 307 KiB\/s +ETA 30s$/);
  });

  it('ETA by bytes when the total size is known; failures and deferrals shown', () => {
    const line = formatProgressLine(row({ direction: 'in', totalBytes: 12 * 1024 * 1024, failed: 2, deferred: 1 }), 10_000);
    // 3 MiB in 10 s, 9 MiB left → 30 s.
    expect(line).toMatch(/in .* 3\.0 MiB of 12 MiB .* ETA 30s +\(2 failed, 1 deferred\)$/);
  });

  it('a log line (journald, cron mail) carries the rate and, while work is left, the ETA', () => {
    // 30 of 120 in 10 s: 3 items/s, 90 left → 30 s; a finished row has no time left.
    const [running, finished] = progressLogFields([row(), row({ mailbox: 'mb1002', done: 5, total: 5 })], 10_000);
    expect(running).toMatchObject({
      mailbox: 'mb1001',
      done: 30,
      total: 120,
      itemsPerSec: 3,
      bytesPerSec: 314573,
      eta: '30s',
      etaSeconds: 30,
    });
    expect(finished).toMatchObject({ mailbox: 'mb1002', done: 5, total: 5, itemsPerSec: 0.5, etaSeconds: 0 });
  });

  it('units and durations', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatBytes(5 * 1024 ** 3)).toBe('5.0 GiB');
    expect(formatDuration(59_400)).toBe('59s');
    expect(formatDuration(125_000)).toBe('2m05s');
    expect(formatDuration(7_260_000)).toBe('2h01m');
  });

  it('summary table: one row per mailbox and direction, aligned', () => {
    const t = summaryTable(
      [row({ done: 120, total: 120 }), row({ mailbox: 'partner', direction: 'in', done: 7, total: 7, failed: 1, bytes: 2048 })],
      60_000,
    );
    const lines = t.split('\n');
    expect(lines[0]).toMatch(/^mailbox +dir +done +failed +deferred +bytes +time +rate$/);
    expect(lines[2]).toMatch(/^mb1001 +out +120 +0 +0 +3\.0 MiB +1m00s +2\.0\/s 51 KiB\/s$/);
    expect(lines[3]).toMatch(/^partner +in +7 +1 +0 +2\.0 KiB +1m00s/);
  });
});

describe('ProgressView', () => {
  it('terminal: redraws the block in place (cursor up by the lines drawn), then the table', () => {
    let out = '';
    const v = new ProgressView({ tty: true, out: { write: (t) => void (out += t) }, log: () => undefined, now: () => 5000 });
    v.tick([row(), row({ direction: 'in' })]);
    expect(out).not.toContain('\x1b[2A');
    v.tick([row({ done: 31 }), row({ direction: 'in' })]);
    expect(out).toContain('\x1b[2A');
    v.finish([row({ done: 120, total: 120 })]);
    expect(out).toMatch(/\x1b\[2A\r\x1b\[Jmailbox +dir/);
  });

  it('elsewhere: a log line at most every 10 s, and only when something changed', () => {
    let t = 0;
    const logged: number[] = [];
    const v = new ProgressView({
      tty: false,
      out: { write: () => undefined },
      log: (rows) => logged.push(rows[0]?.done ?? -1),
      now: () => t,
    });
    for (let s = 1; s <= 35; s++) {
      t = s * 1000;
      v.tick([row({ done: s < 25 ? s : 24 })]);
    }
    // At 10 s and 20 s; at 30 s nothing had moved since 24 s → but it changed since the last line (20), so logged.
    expect(logged).toEqual([10, 20, 24]);
    t = 50_000;
    v.tick([row({ done: 24 })]);
    expect(logged).toEqual([10, 20, 24]); // unchanged: no new line
  });

  it('elsewhere: no line while nothing has been taken on since the start, then one once work arrives', () => {
    let t = 0;
    const logged: number[] = [];
    const v = new ProgressView({
      tty: false,
      out: { write: () => undefined },
      log: (rows) => logged.push(rows[0]?.total ?? -1),
      now: () => t,
    });
    const idle = [row({ done: 0, total: 0, bytes: 0 }), row({ direction: 'in', done: 0, total: 0, bytes: 0 })];
    for (let s = 1; s <= 25; s++) {
      t = s * 1000;
      v.tick(idle);
    }
    expect(logged).toEqual([]);
    t = 31_000;
    v.tick([row({ done: 0, total: 3, bytes: 0 }), idle[1]!]);
    expect(logged).toEqual([3]);
  });
});
