/**
 * From verified calls to cycles: a call marks its mailbox "cycle now"; the daemon's scheduler
 * already merges requests made while a cycle runs into one follow-up cycle, and this keeps at most
 * one request per `minGapMs` per mailbox — later calls within the gap become one request at its end.
 */
export interface TriggerTimers {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

export class CallbackTrigger {
  private readonly last = new Map<number, number>();
  private readonly pending = new Map<number, unknown>();
  private closed = false;

  constructor(
    private readonly requestCycle: (mailboxId: number) => void,
    private readonly minGapMs: number,
    private readonly now: () => number,
    private readonly timers: TriggerTimers,
  ) {}

  /** A verified call for `mailboxId`. */
  poke(mailboxId: number): void {
    if (this.closed || this.pending.has(mailboxId)) return;
    // Never more than the gap: a wall clock stepped back would otherwise hold the mailbox's
    // calls (and ignore its later ones) for as long as the step.
    const wait = Math.min(this.minGapMs, (this.last.get(mailboxId) ?? -Infinity) + this.minGapMs - this.now());
    if (wait <= 0) return this.fire(mailboxId);
    this.pending.set(
      mailboxId,
      this.timers.set(() => {
        this.pending.delete(mailboxId);
        this.fire(mailboxId);
      }, wait),
    );
  }

  private fire(mailboxId: number): void {
    if (this.closed) return;
    this.last.set(mailboxId, this.now());
    this.requestCycle(mailboxId);
  }

  close(): void {
    this.closed = true;
    for (const h of this.pending.values()) this.timers.clear(h);
    this.pending.clear();
  }
}
