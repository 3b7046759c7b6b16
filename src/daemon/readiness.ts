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
  readonly lastError: string | null;
  readonly stuck: StuckDirection[];
  /** Mailboxes left out of the cycles after their own part failed (the others go on). */
  readonly failing: MailboxFailure[];
  /** With callbacks: what the receiver heard, and a warning when polls keep finding unannounced parcels. */
  readonly callbacks?: CallbackHealth & { readonly warning: string | null };
}

export class HealthState {
  /** Consecutive failed attempts to reach the service at start-up. */
  connectFailures = 0;
  lastSuccessAt: number | undefined;
  lastError: string | undefined;

  /**
   * Ready: connected, and the last cycle succeeded recently (with cron windows: the last one did
   * not fail — between windows there is nothing to be fresh about).
   */
  readiness(s: {
    now: number;
    pollMs: number;
    windows: boolean;
    stopping: boolean;
    scheduled: boolean;
    cycleFailures: number;
    stuck: StuckDirection[];
    failing: MailboxFailure[];
  }): Readiness {
    const window = Math.max(3 * s.pollMs, 60_000);
    const fresh = this.lastSuccessAt !== undefined && s.now - this.lastSuccessAt <= window;
    const unwell = s.cycleFailures > 0 || this.connectFailures > 0 || !s.scheduled;
    const ready = !s.stopping && !unwell && s.stuck.length === 0 && s.failing.length === 0 && (fresh || s.windows);
    return {
      ready,
      lastSuccessAt: this.lastSuccessAt ? new Date(this.lastSuccessAt).toISOString() : null,
      lastError: this.lastError ?? null,
      stuck: s.stuck,
      failing: s.failing,
    };
  }
}
