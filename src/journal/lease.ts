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
  /** Milliseconds until the expiry on the server's clock (negative once expired). */
  readonly remainingMs: number;
}

/**
 * A write under a token that is no longer the mailbox's: refused, nothing written; that mailbox's
 * pipelines must stop. Also raised before a side effect (a rename, a confirm, an upload, an
 * archive) that the lease no longer allows: `selfFenced`.
 */
export class JournalLeaseLostError extends GridsyncError {
  readonly code = 'JOURNAL_LEASE_LOST';
  constructor(
    readonly mailboxId: number,
    readonly owner: string,
    readonly selfFenced = false,
  ) {
    super(
      selfFenced
        ? `mailbox ${mailboxId}: ${owner} does not hold its lease now (lost, or not renewed in time); no new side effect starts`
        : `mailbox ${mailboxId}: ${owner} no longer holds its lease (another instance took it over); its write was refused`,
    );
  }
}

/**
 * What a mailbox's pipelines see of its lease. With the SQLite journal it is `ALWAYS_HELD` (the
 * single-daemon lock holds every mailbox; nothing is checked, nothing costs).
 */
export interface MailboxLease {
  /** The fencing token held now; undefined with the SQLite journal and while not held. */
  token(): number | undefined;
  /** Whether a side effect outside the database may start now (held, and before the self-fencing deadline). */
  mayAct(): boolean;
  /** Throws `JournalLeaseLostError` (self-fenced) unless `mayAct()`. Called right before each side effect. */
  assertMayAct(): void;
  /** Aborted when the lease is lost: the requests in flight stop. */
  signal(): AbortSignal | undefined;
  /** Monotonic ms at which the current holding began (a new owner's waits count from it). */
  heldSince(): number;
}

export const ALWAYS_HELD: MailboxLease = {
  token: () => undefined,
  mayAct: () => true,
  assertMayAct: () => undefined,
  signal: () => undefined,
  heldSince: () => 0,
};

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

/**
 * The set of mailboxes an instance serves, as announced: the ids sorted, each once. Instances with
 * the same set split those mailboxes fairly; `live` of `planLeases` holds only those.
 */
export function servedMailboxes(mailboxIds: readonly number[]): string {
  return [...new Set(mailboxIds)].sort((a, b) => a - b).join(',');
}

/**
 * Which free leases to take and which held ones to hand back, computed alike on every instance:
 * each live instance aims at its `fairShare`. Held leases are handed back only while another live
 * instance is below its share (it will take them); free ones beyond the own share are taken only
 * while no other live instance is below its share (nobody else wants them: a dead instance's
 * mailboxes are not left waiting for a fair split).
 *
 * `live` must name only instances serving the same mailboxes as `me` (`Leases.peers`): one whose
 * config lists others (a rolling config change, hosts given parts of the mailboxes) counts as
 * below a share of mailboxes it will never take, and what was handed back to it stayed free.
 */
export function planLeases(p: {
  readonly mailboxes: readonly number[];
  readonly held: ReadonlySet<number>;
  readonly rows: readonly LeaseRow[];
  readonly live: readonly string[];
  readonly me: string;
}): { acquire: number[]; release: number[] } {
  const names = [...new Set([...p.live, p.me])];
  const holder = new Map(p.rows.filter((r) => r.live).map((r) => [r.mailboxId, r.owner]));
  const count = (name: string): number =>
    p.mailboxes.filter((m) => (name === p.me ? p.held.has(m) : holder.get(m) === name && !p.held.has(m))).length;
  const share = (name: string): number => fairShare(p.mailboxes.length, names, name);
  const othersWanting = names.some((x) => x !== p.me && count(x) < share(x));
  const mine = count(p.me);
  const myShare = share(p.me);
  const release = othersWanting && mine > myShare ? [...p.held].sort((a, b) => b - a).slice(0, mine - myShare) : [];
  const free = p.mailboxes.filter((m) => !p.held.has(m) && (holder.get(m) === undefined || holder.get(m) === p.me));
  const room = othersWanting ? Math.max(0, myShare - mine) : free.length;
  return { acquire: free.slice(0, room), release };
}

/** The instance name when none is configured: the host name and the pid (unique on a host, readable in status). */
export function defaultInstanceName(hostname: string, pid: number): string {
  return `${hostname}-${pid}`;
}
