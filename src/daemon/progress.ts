/**
 * Where each mailbox and direction stands, fed by the pipelines' events alone (nothing polls the
 * pipelines): items taken on, finished, failed, deferred, bytes. A direction starts with what the
 * journal already holds for it (the work a previous run left), then grows with every listed
 * parcel and claimed file. `once` shows it as progress lines and a summary; `run` logs it; the
 * outbound queue-depth metric is its outbound "waiting".
 */
import type { EventBus, PipelineEvents } from '../events/index.js';
import type { ProgressRow } from './progress-row.js';
import type { Direction } from './stuck.js';

interface Tally {
  readonly mailbox: string;
  readonly direction: Direction;
  readonly startedAt: number;
  total: number;
  totalBytes: number;
  done: number;
  failed: number;
  /** Deferred in the current round (a cycle of `run`, a drain round of `once`). */
  deferred: number;
  bytes: number;
}

export class ProgressTracker {
  private readonly tallies = new Map<string, Tally>();

  constructor(
    events: EventBus<PipelineEvents>,
    private readonly now: () => number,
    /** Told the items still waiting in a direction whenever that changes (the queue-depth metric). */
    private readonly onWaiting: (mailbox: string, direction: Direction, waiting: number) => void = () => {},
  ) {
    const on = <K extends keyof PipelineEvents>(name: K, direction: Direction, apply: (t: Tally, e: PipelineEvents[K]) => void): void => {
      events.on(name, (e) => {
        const t = this.tallies.get(key(e.mailbox, direction));
        if (!t) return;
        apply(t, e);
        this.onWaiting(t.mailbox, direction, waiting(t));
      });
    };
    const finished = (t: Tally, e: { count: number }): void => {
      t.done += e.count;
      t.failed += e.count;
    };
    on('inbound:listed', 'in', (t, e) => {
      t.total += e.count;
      t.totalBytes += e.bytes;
    });
    on('inbound:redelivered', 'in', (t, e) => (t.total += e.count));
    on('inbound:received', 'in', (t, e) => {
      t.done += e.count;
      t.bytes += e.bytes;
    });
    on('inbound:failed', 'in', finished);
    on('inbound:deferred', 'in', (t, e) => (t.deferred += e.count));
    on('outbound:claimed', 'out', (t, e) => (t.total += e.count));
    on('outbound:sent', 'out', (t, e) => {
      t.done += e.count;
      t.bytes += e.bytes;
    });
    on('outbound:rejected', 'out', finished);
    on('outbound:failed', 'out', finished);
    on('outbound:deferred', 'out', (t, e) => (t.deferred += e.count));
  }

  /** Starts following a direction, with the items (and declared bytes) the journal holds for it. */
  begin(mailbox: string, direction: Direction, left: { items: number; bytes: number }): void {
    if (this.tallies.has(key(mailbox, direction))) return;
    const t: Tally = {
      mailbox,
      direction,
      startedAt: this.now(),
      total: left.items,
      totalBytes: left.bytes,
      done: 0,
      failed: 0,
      deferred: 0,
      bytes: 0,
    };
    this.tallies.set(key(mailbox, direction), t);
    this.onWaiting(mailbox, direction, waiting(t));
  }

  /** A new cycle or drain round: what it defers is counted afresh. */
  newRound(): void {
    for (const t of this.tallies.values()) t.deferred = 0;
  }

  rows(): ProgressRow[] {
    return [...this.tallies.values()].map((t) => ({
      mailbox: t.mailbox,
      direction: t.direction,
      done: t.done,
      // An item finished without being counted in (a file refused before its claim) still counts.
      total: Math.max(t.total, t.done),
      failed: t.failed,
      deferred: t.deferred,
      bytes: t.bytes,
      ...(t.totalBytes ? { totalBytes: t.totalBytes } : {}),
      startedAt: t.startedAt,
    }));
  }
}

function key(mailbox: string, direction: Direction): string {
  return `${mailbox}\0${direction}`;
}

function waiting(t: Tally): number {
  return Math.max(0, t.total - t.done);
}
