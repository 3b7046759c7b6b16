/**
 * Lease metrics (issue: several instances on one PostgreSQL journal): which mailboxes this
 * instance holds, how often it took or lost one, how many of its writes a newer token refused, and
 * how long a mailbox went unserved before a takeover. Labelled by mailbox name like every other
 * series. The lease keeper reports through the methods; nothing else writes these series.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export class LeaseMetrics {
  readonly held: Gauge<'mailbox'>;
  readonly acquiredTotal: Counter<'mailbox'>;
  readonly lostTotal: Counter<'mailbox'>;
  readonly staleWritesRefusedTotal: Counter<'mailbox'>;
  readonly takeoverSeconds: Histogram<'mailbox'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.held = new Gauge({
      name: 'gridsync_lease_held',
      help: "1 while this instance holds the mailbox's lease (SQLite journal: always 1, the single-daemon lock holds every mailbox)",
      labelNames: ['mailbox'],
      registers,
    });
    this.acquiredTotal = new Counter({
      name: 'gridsync_lease_acquired_total',
      help: "Times this instance took a mailbox's lease (a start, a takeover from another instance, a return after a loss)",
      labelNames: ['mailbox'],
      registers,
    });
    this.lostTotal = new Counter({
      name: 'gridsync_lease_lost_total',
      help: "Times this instance lost a mailbox's lease without handing it back (renewal late or refused, another instance took over)",
      labelNames: ['mailbox'],
      registers,
    });
    this.staleWritesRefusedTotal = new Counter({
      name: 'gridsync_lease_stale_writes_refused_total',
      help: 'Journal writes of this instance refused because its fencing token for the mailbox was stale (another instance had taken the lease over, or this one had lost it); each refused write counts',
      labelNames: ['mailbox'],
      registers,
    });
    this.takeoverSeconds = new Histogram({
      name: 'gridsync_lease_takeover_seconds',
      help: "Seconds a mailbox went without a live lease before this instance took it over (the previous lease's end to the takeover, on the database clock)",
      labelNames: ['mailbox'],
      buckets: [0.1, 0.5, 1, 2, 5, 10, 15, 30, 60],
      registers,
    });
  }

  /** Every mailbox's series at 0 from the start; with the SQLite journal every mailbox is held for good. */
  declare(mailboxes: readonly string[], alwaysHeld: boolean): void {
    for (const mailbox of mailboxes) {
      this.held.set({ mailbox }, alwaysHeld ? 1 : 0);
      this.acquiredTotal.inc({ mailbox }, 0);
      this.lostTotal.inc({ mailbox }, 0);
      this.staleWritesRefusedTotal.inc({ mailbox }, 0);
    }
  }

  /** This instance took the lease; `unheldSeconds`: how long the mailbox had been without a live lease (a takeover), if known. */
  acquired(mailbox: string, unheldSeconds?: number): void {
    this.held.set({ mailbox }, 1);
    this.acquiredTotal.inc({ mailbox });
    if (unheldSeconds !== undefined) this.takeoverSeconds.observe({ mailbox }, Math.max(0, unheldSeconds));
  }

  /** The lease was lost (not handed back): a failed or refused renewal, a refused write. */
  lost(mailbox: string): void {
    this.held.set({ mailbox }, 0);
    this.lostTotal.inc({ mailbox });
  }

  /** Handed back on purpose (SIGTERM, fair share): not a loss. */
  released(mailbox: string): void {
    this.held.set({ mailbox }, 0);
  }

  /** One journal write refused for a stale token (`JOURNAL_LEASE_LOST`); the first also ends the holding (`lost`). */
  staleWriteRefused(mailbox: string): void {
    this.staleWritesRefusedTotal.inc({ mailbox });
  }
}
