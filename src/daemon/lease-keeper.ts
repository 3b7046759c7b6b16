/**
 * The lease keeper: holds this instance's mailbox leases in a shared journal — takes each free
 * one, renews the held ones every `renewMs`, hands them back on stop — and says, per mailbox,
 * whether a side effect may start now (`mayAct`): only while the lease is held and its
 * self-fencing deadline, counted from the send time of the last successful renewal on a monotonic
 * clock, has not passed. A lease taken over, refused by a journal write, or renewed too late is
 * reported once through `onLost`, so that the mailbox's pipelines stop.
 *
 * Not wired into the daemon yet (the next step, docs/high-availability.md): it takes every mailbox
 * it is given, without fair sharing between instances. With the SQLite journal every lease is
 * trivially held.
 */
import { mayAct, selfFenceDeadline, type Lease, type Leases } from '../journal/index.js';

export type LeaseLossReason = 'taken-over' | 'renewal-late' | 'write-refused';

export interface LeaseKeeperOptions {
  readonly leases: Leases;
  readonly mailboxIds: readonly number[];
  readonly ttlMs: number;
  readonly renewMs: number;
  readonly marginMs?: number;
  /** Monotonic milliseconds; default `performance.now`. */
  readonly now?: () => number;
  readonly onLost: (mailboxId: number, why: LeaseLossReason) => void;
  /** A renewal or acquisition that failed for a reason other than the lease (database down). */
  readonly onError?: (mailboxId: number, err: unknown) => void;
}

interface Held {
  readonly lease: Lease;
  readonly deadline: number;
}

export class LeaseKeeper {
  private readonly held = new Map<number, Held>();
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly options: LeaseKeeperOptions) {
    this.now = options.now ?? (() => performance.now());
    options.leases.onLost((mailboxId) => this.lose(mailboxId, 'write-refused'));
  }

  /** Whether a side effect for this mailbox may start now. */
  mayAct(mailboxId: number): boolean {
    const h = this.held.get(mailboxId);
    return h !== undefined && mayAct(this.now(), h.deadline);
  }

  /** The leases held now, by mailbox. */
  heldLeases(): Lease[] {
    return [...this.held.values()].map((h) => h.lease);
  }

  /** Takes what it can at once, then keeps renewing every renewMs. */
  async start(): Promise<void> {
    await this.tick();
    if (this.stopped) return;
    this.timer = setInterval(() => void this.tick(), this.options.renewMs);
    this.timer.unref();
  }

  /** One round: renew the held leases, take the free ones, drop what ran past its deadline. */
  tick(): Promise<void> {
    this.running ??= this.round().finally(() => (this.running = undefined));
    return this.running;
  }

  private async round(): Promise<void> {
    const { leases, ttlMs, marginMs } = this.options;
    await Promise.all(
      this.options.mailboxIds.map(async (mailboxId) => {
        const h = this.held.get(mailboxId);
        const sentAt = this.now();
        try {
          const lease = h ? await leases.renew(h.lease, ttlMs) : await leases.acquire(mailboxId, ttlMs);
          if (this.stopped) return;
          if (lease) this.held.set(mailboxId, { lease, deadline: selfFenceDeadline(sentAt, ttlMs, marginMs) });
          else if (h) this.lose(mailboxId, 'taken-over');
        } catch (err) {
          this.options.onError?.(mailboxId, err);
        }
        const now = this.held.get(mailboxId);
        if (now && !mayAct(this.now(), now.deadline)) this.lose(mailboxId, 'renewal-late');
      }),
    );
  }

  private lose(mailboxId: number, why: LeaseLossReason): void {
    if (!this.held.delete(mailboxId)) return;
    this.options.onLost(mailboxId, why);
  }

  /** Stops renewing and hands every held lease back (a planned stop). Safe to call twice. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
    const held = [...this.held.values()];
    this.held.clear();
    await Promise.all(held.map((h) => this.options.leases.release(h.lease).catch(() => undefined)));
  }
}
