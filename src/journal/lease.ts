/**
 * Per-mailbox leases with fencing tokens: what a lease is, and the two decisions an instance takes
 * on its own (when to stop acting, how many mailboxes to hold). The database side is in each store
 * (`./postgres.ts`); the rule that makes a lease safe is there too: every write checks the token.
 *
 * Defaults: a lease lasts 10 s and is renewed every 3 s, so two renewals may fail before the
 * owner must stop.
 */
import { GridsyncError } from '../errors/index.js';

/** Self-fencing stops this long before the lease's expiry as measured from the renewal's send time. */
export const LEASE_MARGIN_MS = 1_000;

/** A lease this instance holds. `expiresAt` is the server's, for display only: decisions use the monotonic deadline. */
export interface Lease {
  readonly mailboxId: number;
  readonly owner: string;
  readonly token: number;
  readonly expiresAt: Date;
}

/** A lease row as the database has it (status, monitoring). */
export interface LeaseRow extends Lease {
  /** Unexpired on the database server's clock. */
  readonly live: boolean;
}

/** A write under a token that is no longer the mailbox's: refused, nothing written; that mailbox's pipelines must stop. */
export class JournalLeaseLostError extends GridsyncError {
  readonly code = 'JOURNAL_LEASE_LOST';
  constructor(
    readonly mailboxId: number,
    readonly owner: string,
  ) {
    super(`mailbox ${mailboxId}: ${owner} no longer holds its lease (another instance took it over); its write was refused`);
  }
}

/**
 * Self-fencing: the monotonic time (ms, e.g. `performance.now()`) after which the holder must start
 * no new side effect. It counts from when the last successful renewal was SENT, not answered: the
 * server may have stamped the expiry any time after sending, never before.
 */
export function selfFenceDeadline(renewalSentAt: number, ttlMs: number, marginMs: number = LEASE_MARGIN_MS): number {
  return renewalSentAt + ttlMs - marginMs;
}

/** Whether the holder may still start a side effect at monotonic time `now`. */
export function mayAct(now: number, deadline: number): boolean {
  return now < deadline;
}

/**
 * Fair share: how many of `mailboxes` the instance `me` should hold when `live` instances (me
 * included or not) serve them. Each gets ⌊n/k⌋; the first n mod k instances in name order get one
 * more, so every instance computes the same split without talking to the others.
 */
export function fairShare(mailboxes: number, live: readonly string[], me: string): number {
  const names = [...new Set([...live, me])].sort();
  const k = names.length;
  const base = Math.floor(mailboxes / k);
  return base + (names.indexOf(me) < mailboxes % k ? 1 : 0);
}

/** The instance name when none is configured: the host name and the pid (unique on a host, readable in status). */
export function defaultInstanceName(hostname: string, pid: number): string {
  return `${hostname}-${pid}`;
}
