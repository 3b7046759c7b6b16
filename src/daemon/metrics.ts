/** Prometheus metrics of the daemon (prom-client), exposed on /metrics. */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

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
    help: 'End of the last successful cycle (unix time)',
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
  readonly up = new Gauge({
    name: 'gridsync_service_reachable',
    help: '1 when the last call to the service succeeded',
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'gridsync_' });
  }
}
