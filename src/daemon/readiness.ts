/**
 * Readiness: what /readyz answers. The connect loop and the cycles report their outcomes here;
 * readiness is decided from those outcomes alone.
 */
import type { CallbackHealth } from '../callbacks/index.js';
import type { MailboxFailure } from './failing-mailboxes.js';
import type { StuckDirection } from './stuck.js';

export interface Readiness {
  readonly ready: boolean;
  readonly lastSuccessAt: string | null;
  /** The last time an item moved inside a running cycle (cycle-activity.ts): a long cycle is busy, not stalled. */
  readonly lastMovedAt: string | null;
  readonly lastError: string | null;
  readonly stuck: StuckDirection[];
  /** Mailboxes left out of the cycles after their own part failed (the others go on). */
  readonly failing: MailboxFailure[];
  /** With callbacks: what the receiver heard, and a warning when polls keep finding unannounced parcels. */
  readonly callbacks?: CallbackHealth & { readonly warning: string | null };
}

interface Moment {
  readonly at: number;
  readonly monotonic: number;
}

export class HealthState {
  /** Consecutive failed attempts to reach the service at start-up. */
  connectFailures = 0;
  lastError: string | undefined;
  /** Wall-clock time (shown) and monotonic time (measured from) of the last successful cycle. */
  private lastSuccess: Moment | undefined;
  /** …and of the last item that moved inside a cycle still running. */
  private lastMoved: Moment | undefined;

  constructor(private readonly monotonic: () => number = () => performance.now()) {}

  /** A cycle succeeded; `at` is the wall-clock time /readyz shows. */
  succeeded(at: number): void {
    this.lastSuccess = { at, monotonic: this.monotonic() };
  }

  /** An item moved inside a running cycle; `at` is the wall-clock time /readyz shows. */
  moved(at: number): void {
    this.lastMoved = { at, monotonic: this.monotonic() };
  }

  /**
   * Ready: connected, and the last cycle succeeded recently or the one running moves items (with
   * cron windows: the last one did not fail — between windows there is nothing to be fresh
   * about). How recently is measured on the monotonic clock: a wall clock stepped forward made a
   * sound daemon unready until its next cycle, one stepped back kept a stalled one ready for the
   * length of the step.
   */
  readiness(s: {
    pollMs: number;
    windows: boolean;
    stopping: boolean;
    scheduled: boolean;
    cycleFailures: number;
    stuck: StuckDirection[];
    failing: MailboxFailure[];
  }): Readiness {
    const window = Math.max(3 * s.pollMs, 60_000);
    const recent = (m: Moment | undefined): boolean => m !== undefined && this.monotonic() - m.monotonic <= window;
    const fresh = recent(this.lastSuccess) || recent(this.lastMoved);
    const unwell = s.cycleFailures > 0 || this.connectFailures > 0 || !s.scheduled;
    const ready = !s.stopping && !unwell && s.stuck.length === 0 && s.failing.length === 0 && (fresh || s.windows);
    return {
      ready,
      lastSuccessAt: this.lastSuccess ? new Date(this.lastSuccess.at).toISOString() : null,
      lastMovedAt: this.lastMoved ? new Date(this.lastMoved.at).toISOString() : null,
      lastError: this.lastError ?? null,
      stuck: s.stuck,
      failing: s.failing,
    };
  }
}
