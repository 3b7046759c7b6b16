/**
 * The lease keeper: holds this instance's fair share of the mailbox leases in a shared journal —
 * announces the instance, renews the held leases every `renewMs`, takes free ones and hands back
 * extras as `planLeases` says, hands everything back on stop — and gives each mailbox's pipelines
 * a `MailboxLease`: whether a side effect may start now (held, and before the self-fencing
 * deadline counted from the send time of the last successful renewal, on the monotonic clock and
 * on the wall clock, which alone moves on across a machine's sleep), the
 * token, and a signal aborted on a loss. A lease taken over, refused by a journal write, renewed
 * too late or handed back is reported once through `onLost`; a lease taken through `onAcquired`.
 *
 * A lease held by another instance is looked at again right after its expiry (not only at the
 * next renewal round), so that a failover takes the lease plus a few milliseconds.
 */
import {
  JournalLeaseLostError,
  mayAct,
  planLeases,
  selfFenceDeadline,
  type Lease,
  type LeaseRow,
  type Leases,
  type MailboxLease,
} from '../journal/index.js';

export type LeaseLossReason = 'taken-over' | 'renewal-late' | 'write-refused' | 'handed-back' | 'refused';

export interface LeaseKeeperOptions {
  readonly leases: Leases;
  readonly mailboxIds: readonly number[];
  readonly ttlMs: number;
  readonly renewMs: number;
  readonly marginMs?: number;
  /** Monotonic milliseconds; default `performance.now`. */
  readonly now?: () => number;
  /**
   * Wall-clock milliseconds; default `Date.now`. The monotonic clock stands still while the machine
   * sleeps (a suspended VM), the wall clock is set forward on waking: a holding ends at whichever
   * deadline comes first, so a guest that slept past its lease starts nothing when it wakes.
   */
  readonly wall?: () => number;
  readonly onLost: (mailboxId: number, why: LeaseLossReason) => void;
  /** `unheldMs`: how long the mailbox had been without a live lease (database clock), when a lease row existed before. */
  readonly onAcquired?: (lease: Lease, unheldMs?: number) => void;
  /** A round step that failed for a reason other than the lease (database down); mailboxId when it concerned one. */
  readonly onError?: (err: unknown, mailboxId?: number) => void;
  /** A round's announce and list got through: the journal answers (again, after `onError`s). */
  readonly onReachable?: () => void;
  /**
   * Asked at the start of every round: a reason this instance may not hold any lease now (the
   * journal serves another service), or undefined. While there is one, every held lease is handed
   * back and none taken; `refusal()` returns it. A check that fails is an `onError`, not a refusal.
   */
  readonly check?: () => Promise<Error | undefined>;
}

interface Held {
  lease: Lease;
  deadline: number;
  /** The same deadline on the wall clock. */
  wallDeadline: number;
  readonly since: number;
  readonly controller: AbortController;
  fence: NodeJS.Timeout | undefined;
}

/** Looked at again this long after a foreign lease's expiry (the server's clock and ours tick apart). */
const AFTER_EXPIRY_MS = 25;

export class LeaseKeeper {
  private readonly held = new Map<number, Held>();
  private readonly handles = new Map<number, MailboxLease>();
  private readonly now: () => number;
  private readonly wall: () => number;
  private timer: NodeJS.Timeout | undefined;
  private wake: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  /** Hand-backs of leases renewed too late: a round takes nothing before they are done. */
  private readonly releasing = new Set<Promise<void>>();
  private refused: Error | undefined;
  /** `unreachable()`. */
  private unreachableBy: Error | undefined;

  constructor(private readonly options: LeaseKeeperOptions) {
    this.now = options.now ?? (() => performance.now());
    this.wall = options.wall ?? Date.now;
    options.leases.onLost((mailboxId) => this.lose(mailboxId, 'write-refused'));
  }

  /** Whether a side effect for this mailbox may start now. */
  mayAct(mailboxId: number): boolean {
    const h = this.held.get(mailboxId);
    return h !== undefined && this.inTime(h);
  }

  /** Before the self-fencing deadline on both clocks (LeaseKeeperOptions.wall says why both). */
  private inTime(h: Held): boolean {
    return mayAct(this.now(), h.deadline) && mayAct(this.wall(), h.wallDeadline);
  }

  /** Why this instance holds no lease and takes none now (`LeaseKeeperOptions.check`), if it does not. */
  refusal(): Error | undefined {
    return this.refused;
  }

  /**
   * The last failure to use the journal (unreachable, frozen, read-only, out of slots), until a
   * round's announce and list get through again.
   */
  unreachable(): Error | undefined {
    return this.unreachableBy;
  }

  /** A step failed for a reason other than the lease: the database (`LeaseKeeperOptions.onError`). */
  private failed(err: unknown, mailboxId?: number): void {
    if (err instanceof Error) this.unreachableBy = err;
    this.options.onError?.(err, mailboxId);
  }

  /** The leases held now, by mailbox. */
  heldLeases(): Lease[] {
    return [...this.held.values()].map((h) => h.lease);
  }

  /** What the mailbox's pipelines see of its lease (one object per mailbox, valid across holdings). */
  handle(mailboxId: number): MailboxLease {
    let h = this.handles.get(mailboxId);
    if (!h) {
      const owner = this.options.leases.owner;
      h = {
        token: () => this.held.get(mailboxId)?.lease.token,
        mayAct: () => this.mayAct(mailboxId),
        assertMayAct: () => {
          if (!this.mayAct(mailboxId)) throw new JournalLeaseLostError(mailboxId, owner, true);
        },
        signal: () => this.held.get(mailboxId)?.controller.signal ?? AbortSignal.abort(new JournalLeaseLostError(mailboxId, owner, true)),
        heldSince: () => this.held.get(mailboxId)?.since ?? Number.POSITIVE_INFINITY,
      };
      this.handles.set(mailboxId, h);
    }
    return h;
  }

  /** Takes what it can at once, then keeps renewing every renewMs. */
  async start(): Promise<void> {
    await this.tick();
    if (this.stopped) return;
    this.timer = setInterval(() => void this.tick(), this.options.renewMs);
    this.timer.unref();
  }

  /** One round: announce, renew the held leases, then take or hand back what the fair share says. */
  tick(): Promise<void> {
    this.running ??= this.round().finally(() => (this.running = undefined));
    return this.running;
  }

  private async round(): Promise<void> {
    const { leases, ttlMs, mailboxIds } = this.options;
    if (this.options.check && (await this.refuses(this.options.check))) return;
    await Promise.all([...this.held.keys()].map((m) => this.renew(m)));
    await Promise.all(this.releasing);
    let rows: LeaseRow[];
    let live: string[];
    try {
      await leases.announce(ttlMs, mailboxIds);
      [rows, live] = await Promise.all([leases.list(), leases.peers(mailboxIds)]);
      this.unreachableBy = undefined;
      this.options.onReachable?.();
    } catch (err) {
      this.failed(err);
      return;
    }
    if (this.stopped) return;
    const plan = planLeases({ mailboxes: mailboxIds, held: new Set(this.held.keys()), rows, live, me: leases.owner });
    for (const m of plan.release) {
      const h = this.held.get(m);
      this.lose(m, 'handed-back');
      if (h) await leases.release(h.lease).catch((err: unknown) => this.failed(err, m));
    }
    await Promise.all(
      plan.acquire.map((m) =>
        this.acquire(
          m,
          rows.find((r) => r.mailboxId === m),
        ),
      ),
    );
    this.wakeAfterExpiry(rows);
  }

  private async renew(mailboxId: number): Promise<void> {
    const h = this.held.get(mailboxId);
    if (!h) return;
    const sentAt = this.now();
    const sentAtWall = this.wall();
    try {
      const lease = await this.options.leases.renew(h.lease, this.options.ttlMs);
      if (this.stopped || this.held.get(mailboxId) !== h) return;
      if (!lease) return this.lose(mailboxId, 'taken-over');
      h.lease = lease;
      h.deadline = selfFenceDeadline(sentAt, this.options.ttlMs, this.options.marginMs);
      h.wallDeadline = selfFenceDeadline(sentAtWall, this.options.ttlMs, this.options.marginMs);
      this.armFence(mailboxId, h);
    } catch (err) {
      this.failed(err, mailboxId);
    }
    if (this.held.get(mailboxId) === h && !this.inTime(h)) this.lose(mailboxId, 'renewal-late');
  }

  private async acquire(mailboxId: number, before: LeaseRow | undefined): Promise<void> {
    const sentAt = this.now();
    const sentAtWall = this.wall();
    // remainingMs is negative once a lease has expired: how long ago, on the database's clock.
    const unheldMs = before && !before.live ? -before.remainingMs : undefined;
    try {
      const lease = await this.options.leases.acquire(mailboxId, this.options.ttlMs);
      if (!lease || this.stopped) return;
      const h: Held = {
        lease,
        deadline: selfFenceDeadline(sentAt, this.options.ttlMs, this.options.marginMs),
        wallDeadline: selfFenceDeadline(sentAtWall, this.options.ttlMs, this.options.marginMs),
        since: sentAt,
        controller: new AbortController(),
        fence: undefined,
      };
      if (!this.inTime(h)) return; // answered too late to act on; the next round renews it
      this.held.set(mailboxId, h);
      this.armFence(mailboxId, h);
      this.options.onAcquired?.(lease, unheldMs);
    } catch (err) {
      this.failed(err, mailboxId);
    }
  }

  /** True when `check` gives a reason: every held lease is handed back, and the round ends. */
  private async refuses(check: () => Promise<Error | undefined>): Promise<boolean> {
    try {
      this.refused = await check();
    } catch (err) {
      this.failed(err);
      return this.refused !== undefined;
    }
    if (!this.refused) return false;
    for (const [m, h] of [...this.held]) {
      this.lose(m, 'refused');
      await this.options.leases.release(h.lease).catch((err: unknown) => this.failed(err, m));
    }
    return true;
  }

  /**
   * At the self-fencing deadline the holding ends unless a renewal moved it: requests in flight are
   * aborted then. A timer often runs a little before `now()` reaches the time it was set for (Node
   * counts it on its loop's time, in whole milliseconds), so one that finds the holding still in
   * time is set again: left alone, the holding went on past its deadline until the hung renewal
   * failed (the journal's query timeout, 15 s), its downloads and uploads still running.
   */
  private armFence(mailboxId: number, h: Held): void {
    clearTimeout(h.fence);
    h.fence = setTimeout(
      () => {
        if (this.held.get(mailboxId) !== h) return;
        if (this.inTime(h)) this.armFence(mailboxId, h);
        else this.lose(mailboxId, 'renewal-late');
      },
      Math.max(0, h.deadline - this.now()),
    );
    h.fence.unref();
  }

  /** A round right after the earliest expiry of a lease held by another instance. */
  private wakeAfterExpiry(rows: readonly LeaseRow[]): void {
    clearTimeout(this.wake);
    this.wake = undefined;
    const mine = new Set(this.options.mailboxIds);
    const waits = rows.filter((r) => r.live && mine.has(r.mailboxId) && !this.held.has(r.mailboxId)).map((r) => r.remainingMs);
    if (waits.length === 0 || this.stopped) return;
    const ms = Math.max(0, Math.min(...waits)) + AFTER_EXPIRY_MS;
    if (ms >= this.options.renewMs) return;
    this.wake = setTimeout(() => void this.tick(), ms);
    this.wake.unref();
  }

  private lose(mailboxId: number, why: LeaseLossReason): void {
    const h = this.held.get(mailboxId);
    if (!h) return;
    this.held.delete(mailboxId);
    clearTimeout(h.fence);
    h.controller.abort(new JournalLeaseLostError(mailboxId, this.options.leases.owner, why !== 'write-refused' && why !== 'taken-over'));
    // Renewed too late, the lease may still be ours in the database: hand it back, so that whoever
    // takes it next (this instance too) does so under a new token — work of the abandoned holding
    // (an aborted upload that may still land, a download still writing) never passes for the new one's.
    if (why === 'renewal-late') {
      const handing = this.options.leases.release(h.lease).catch((err: unknown) => this.failed(err, mailboxId));
      this.releasing.add(handing);
      void handing.finally(() => this.releasing.delete(handing));
    }
    this.options.onLost(mailboxId, why);
  }

  /** Stops renewing and hands every held lease back (a planned stop). Safe to call twice. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    clearTimeout(this.wake);
    this.timer = undefined;
    await this.running;
    const held = [...this.held.entries()];
    this.held.clear();
    for (const [, h] of held) {
      clearTimeout(h.fence);
      h.controller.abort(new JournalLeaseLostError(h.lease.mailboxId, this.options.leases.owner, true));
    }
    await Promise.all([
      ...held.map(([, h]) => this.options.leases.release(h.lease).catch(() => undefined)),
      this.options.leases.retire().catch(() => undefined),
    ]);
  }
}
