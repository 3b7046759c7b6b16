/**
 * Prometheus metrics of the daemon (prom-client), exposed on /metrics. Every series the config
 * implies exists from the start at 0 (declare): a counter that first appears at 1 is a rise
 * `increase()` never sees, so the first failure after a start would not alert.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { RETRY_REASONS, type RetryNotice } from '../api/index.js';
import { LeaseMetrics } from './lease-metrics.js';

/** A mailbox as its labels see it: its name, and the directions it has. */
export interface MetricsMailbox {
  readonly name: string;
  readonly inbound: boolean;
  readonly outbound: boolean;
}

/**
 * prom-client's gauges named like counters (`promtool check metrics` refuses them); the same
 * numbers remain, by type, in nodejs_active_handles, nodejs_active_requests, nodejs_active_resources.
 */
const MISNAMED_DEFAULTS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

export class DaemonMetrics {
  readonly registry = new Registry();
  readonly transfers = new Counter({
    name: 'gridsync_transfers_total',
    help: 'Files transferred',
    labelNames: ['direction', 'mailbox'] as const,
    registers: [this.registry],
  });
  readonly bytes = new Counter({
    name: 'gridsync_transfer_bytes_total',
    help: 'Bytes transferred',
    labelNames: ['direction', 'mailbox'] as const,
    registers: [this.registry],
  });
  readonly failures = new Counter({
    name: 'gridsync_failures_total',
    help: 'Items that failed or were rejected',
    labelNames: ['direction', 'mailbox', 'kind'] as const,
    registers: [this.registry],
  });
  readonly queueDepth = new Gauge({
    name: 'gridsync_queue_depth',
    help: 'Outbound files waiting or in flight',
    labelNames: ['mailbox'] as const,
    registers: [this.registry],
  });
  readonly cycleDuration = new Histogram({
    name: 'gridsync_cycle_duration_seconds',
    help: 'Duration of an inbound cycle',
    labelNames: ['mailbox'] as const,
    buckets: [0.05, 0.1, 0.5, 1, 5, 15, 60, 300],
    registers: [this.registry],
  });
  readonly lastSuccess = new Gauge({
    name: 'gridsync_last_success_timestamp_seconds',
    help: 'End of the last successful cycle of the mailbox (unix time; 0 before the first)',
    labelNames: ['mailbox'] as const,
    registers: [this.registry],
  });
  readonly lastCycleOk = new Gauge({
    name: 'gridsync_last_cycle_success',
    help: "1 when the mailbox's last cycle (with cron windows: the last window) succeeded, 0 when it failed or delivered nothing while items wait",
    labelNames: ['mailbox'] as const,
    registers: [this.registry],
  });
  readonly windowsScheduled = new Gauge({
    name: 'gridsync_schedule_windows',
    help: '1 when cycles run in cron windows (schedule.cron), 0 when they run every schedule.poll',
    registers: [this.registry],
  });
  readonly buildInfo = new Gauge({
    name: 'gridsync_build_info',
    help: 'Always 1; the labels say which gridsync runs, over which protocol, with which journal',
    labelNames: ['version', 'protocol', 'journal'] as const,
    registers: [this.registry],
  });
  readonly deferred = new Counter({
    name: 'gridsync_deferred_total',
    help: 'Items left for a later cycle (disk full, folder not writable, service errors)',
    labelNames: ['direction', 'mailbox'] as const,
    registers: [this.registry],
  });
  readonly stuck = new Gauge({
    name: 'gridsync_deliveries_stuck',
    help: '1 while items wait and nothing has been delivered for several cycles (see /readyz for the reason)',
    labelNames: ['direction', 'mailbox'] as const,
    registers: [this.registry],
  });
  readonly stuckCycles = new Gauge({
    name: 'gridsync_stuck_cycles',
    help: 'Consecutive cycles with items waiting and nothing delivered',
    labelNames: ['direction', 'mailbox'] as const,
    registers: [this.registry],
  });
  readonly rateLimitPauses = new Counter({
    name: 'gridsync_rate_limit_pauses_total',
    help: 'Times a 429 paused every request to the service until Retry-After',
    registers: [this.registry],
  });
  readonly retries = new Counter({
    name: 'gridsync_retries_total',
    help: 'Attempts of a call to the service retried after a retryable failure (reason: http_429, http_5xx, transport, truncated); no mailbox label for calls of no single mailbox (login, session)',
    labelNames: ['mailbox', 'reason'] as const,
    registers: [this.registry],
  });
  readonly freeBytes = new Gauge({
    name: 'gridsync_folder_free_bytes',
    help: 'Free bytes (for an unprivileged user) on the filesystem of each folder gridsync writes to',
    labelNames: ['mailbox', 'folder'] as const,
    registers: [this.registry],
  });
  readonly oldestWaiting = new Gauge({
    name: 'gridsync_inbox_oldest_waiting_seconds',
    help: 'Age of the oldest parcel waiting in the service inbox, from the last pending list (0: none); the service drops parcels after InBoxTimeout',
    labelNames: ['mailbox'] as const,
    registers: [this.registry],
  });
  /** The callback receiver's counters (series at 0 only when callbacks are configured). */
  readonly callbackCalls = new Counter({
    name: 'gridsync_callbacks_received_total',
    help: 'Verified callbacks of the service',
    labelNames: ['mailbox'] as const,
    registers: [this.registry],
  });
  readonly callbackRefused = new Counter({
    name: 'gridsync_callbacks_refused_total',
    help: 'Requests to the callback receiver refused (unverified, too large, too slow)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly callbackMissed = new Counter({
    name: 'gridsync_callbacks_missed_total',
    help: 'Parcels placed that no callback announced (found by a poll)',
    labelNames: ['mailbox'] as const,
    registers: [this.registry],
  });
  readonly up = new Gauge({
    name: 'gridsync_service_reachable',
    help: '1 when the last call to the service succeeded',
    registers: [this.registry],
  });

  /** Mailbox leases (shared PostgreSQL journal): the lease keeper reports through it. */
  readonly leases = new LeaseMetrics(this.registry);

  constructor() {
    // Unprefixed, as every Node.js dashboard expects them (process_resident_memory_bytes, …).
    collectDefaultMetrics({ register: this.registry });
    for (const name of MISNAMED_DEFAULTS) this.registry.removeSingleMetric(name);
  }

  /** What every client of the service tells the metrics (CoreOptions): its rate-limit pauses and its retries. */
  readonly clientHooks = {
    onRateLimitPause: (): void => this.rateLimitPauses.inc(),
    onRetry: (retry: RetryNotice): void =>
      this.retries.inc({ ...(retry.mailbox !== undefined ? { mailbox: retry.mailbox } : {}), reason: retry.reason }),
  };

  /** Exports every series the configuration implies, at 0, before anything happens. */
  declare(mailboxes: readonly MetricsMailbox[], build: { version: string; protocol: string; journal: string }, windows: boolean): void {
    this.buildInfo.set(build, 1);
    this.windowsScheduled.set(windows ? 1 : 0);
    for (const m of mailboxes) {
      const mailbox = m.name;
      this.lastSuccess.set({ mailbox }, 0);
      for (const direction of [...(m.inbound ? ['in' as const] : []), ...(m.outbound ? ['out' as const] : [])]) {
        this.transfers.inc({ direction, mailbox }, 0);
        this.bytes.inc({ direction, mailbox }, 0);
        this.deferred.inc({ direction, mailbox }, 0);
        this.failures.inc({ direction, mailbox, kind: 'failed' }, 0);
        if (direction === 'out') this.failures.inc({ direction, mailbox, kind: 'rejected' }, 0);
        this.stuck.set({ direction, mailbox }, 0);
        this.stuckCycles.set({ direction, mailbox }, 0);
      }
      if (m.outbound) this.queueDepth.set({ mailbox }, 0);
    }
    this.rateLimitPauses.inc(0);
    for (const reason of RETRY_REASONS) {
      this.retries.inc({ reason }, 0);
      for (const m of mailboxes) this.retries.inc({ mailbox: m.name, reason }, 0);
    }
    this.leases.declare(
      mailboxes.map((m) => m.name),
      build.journal === 'sqlite',
    );
  }
}
