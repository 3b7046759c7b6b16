/**
 * Work that goes on after its item gave up its slot, so that the next call can start while the
 * local steps finish: inbound, the fsync, journal and rename after a download and the journal's
 * commit after a confirm; outbound, the archive after an upload. A cycle ends only when all of it
 * has finished; inbound also bounds it (a parcel waits for room before it downloads).
 *
 * A parcel that waits is woken by the next piece of work to finish, one waiter per piece. Waiting
 * with `Promise.race` over the whole set attached a reaction to every unfinished piece, per waiter
 * and per wake-up: at eight downloads 21 KB of garbage per parcel, a seventh of all a warm
 * parcel allocated, and the CPU to make and collect it.
 */
export class TrailingWork {
  private readonly running = new Set<Promise<void>>();
  private readonly waiting: (() => void)[] = [];

  /** `onError` hears what a piece of work threw; nothing else does (the work must handle its own). */
  constructor(private readonly onError: (err: unknown) => void) {}

  get size(): number {
    return this.running.size;
  }

  add(work: Promise<void>): void {
    const tracked: Promise<void> = work.then(
      () => this.finished(tracked),
      (err: unknown) => {
        this.finished(tracked);
        this.onError(err);
      },
    );
    this.running.add(tracked);
  }

  /** Resolves once fewer than `max` pieces are unfinished (at once when they already are). */
  async room(max: () => number): Promise<void> {
    while (this.running.size >= max()) await new Promise<void>((wake) => this.waiting.push(wake));
  }

  /** Resolves once every piece added so far, and every piece those added, has finished. */
  async drain(): Promise<void> {
    while (this.running.size > 0) await Promise.all(this.running);
  }

  private finished(tracked: Promise<void>): void {
    this.running.delete(tracked);
    // With nothing left running nobody else would wake the rest (the bound may have shrunk).
    if (this.running.size === 0) for (const wake of this.waiting.splice(0)) wake();
    else this.waiting.shift()?.();
  }
}
