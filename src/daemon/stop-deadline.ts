/**
 * The one deadline of a stop. Transfers get `shutdownTimeout`; whatever runs after them — a cycle
 * aborted at that deadline, the releases (cleanups.ts) — shares one fixed grace past it, and
 * nothing is waited for beyond: with the journal's server frozen every step hung on its own query
 * or connect timeout, and the releases had a deadline of their own after the transfers' one — a
 * stop took twice shutdownTimeout and more, past systemd's TimeoutStopSec. What is not done by then
 * is left to the process exit, which the journal survives as it survives a SIGKILL.
 */
import type { Logger } from '../log.js';
import { withDeadline } from './cleanups.js';

/** What a stop may take past `shutdownTimeout`, all releases together. */
export const STOP_GRACE_MS = 2000;

/** What a release started after the transfers' deadline still gets, when the grace allows. */
export const CLEANUP_GRACE_MS = 1000;

/**
 * How long a step started at `now` may take: what is left of the transfers' deadline, at least
 * `atLeastMs` of the grace, never past the end of the grace; 0 or less: no time is left for it.
 */
export function allowanceMs(now: number, deadline: { transfersAt: number; endAt: number }, atLeastMs: number): number {
  return Math.min(deadline.endAt - now, Math.max(deadline.transfersAt - now, atLeastMs));
}

export class StopDeadline {
  private readonly transfersAt: number;
  private readonly endAt: number;

  /** `now`: monotonic milliseconds (a clock step must not move a stop). */
  constructor(
    shutdownTimeoutMs: number,
    private readonly now: () => number = () => performance.now(),
    graceMs: number = STOP_GRACE_MS,
  ) {
    this.transfersAt = now() + shutdownTimeoutMs;
    this.endAt = this.transfersAt + graceMs;
  }

  /** What is left of `shutdownTimeout` (0 once it has run out). */
  transfersLeftMs(): number {
    return Math.max(0, this.transfersAt - this.now());
  }

  /** Until the end of the grace: the whole stop's bound (0 once it is reached). */
  leftMs(): number {
    return Math.max(0, this.endAt - this.now());
  }

  /** What a step started now may take (`allowanceMs`); 0 once the grace is used up. */
  allowanceMs(atLeastMs: number = CLEANUP_GRACE_MS): number {
    return Math.max(0, allowanceMs(this.now(), { transfersAt: this.transfersAt, endAt: this.endAt }, atLeastMs));
  }
}

export interface TransfersInStop {
  /** The lease keeper, with a shared journal: its stop hands the leases back. */
  readonly leases?: { stop(): Promise<void> };
  /** The cycle in flight, when one is. */
  readonly inFlight?: () => Promise<unknown> | undefined;
  /** Aborts every transfer and wait still under way. */
  readonly abort: () => void;
  readonly logger: Logger;
}

/**
 * The stop's first part, within `shutdownTimeout`: the leases handed back at once (the next holder
 * need not wait for their expiry), then the cycle in flight let finish; one still running then is
 * aborted and gets what the grace allows. Everything is aborted when it returns.
 */
export async function stopTransfers(deadline: StopDeadline, shutdownTimeoutMs: number, t: TransfersInStop): Promise<void> {
  // A database that does not answer holds a renewal round for its timeouts: within the deadline.
  if (t.leases) await withDeadline(t.leases.stop(), deadline.transfersLeftMs());
  const inFlight = t.inFlight?.()?.catch(() => undefined);
  if (inFlight && !(await withDeadline(inFlight, deadline.transfersLeftMs()))) {
    t.logger.warn(
      { deadlineMs: shutdownTimeoutMs },
      'shutdown deadline reached; aborting in-flight transfers (they resume from the journal at the next start)',
    );
    t.abort();
    // An aborted transfer ends at once; a cycle waiting on a journal that does not answer, at its query timeout.
    await withDeadline(inFlight, deadline.allowanceMs());
  }
  t.abort();
}
