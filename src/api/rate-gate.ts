/**
 * A rate limit applies to the caller, not to one request: after a 429 every request of the client
 * — every worker, every mailbox sharing the credential — waits until the service's Retry-After
 * (or the backoff delay) has passed. Requests already on the wire cannot be recalled; no new one
 * leaves before the time is up.
 */
export class RateGate {
  /** When the pause in force ends, on the clock given; none in force: -Infinity. */
  private until = Number.NEGATIVE_INFINITY;
  /** The length of the pause in force: no wait is longer (a wall clock stepped back would stretch it by the step). */
  private length = 0;
  private count = 0;

  constructor(
    private readonly now: () => number,
    private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>,
    private readonly onPause?: (ms: number) => void,
  ) {}

  /** Pauses started so far (a 429 during a pause extends it without counting again). */
  get pauses(): number {
    return this.count;
  }

  /** Resolves once no pause is in force. */
  async pass(signal?: AbortSignal): Promise<void> {
    for (;;) {
      const until = this.until;
      const wait = Math.min(until - this.now(), this.length);
      if (wait <= 0) return;
      await this.sleep(wait, signal);
      // Served, unless another 429 extended the pause meanwhile; then it is over for every caller.
      if (this.until === until) {
        this.until = Number.NEGATIVE_INFINITY;
        return;
      }
    }
  }

  /** Holds every request for `ms` from now (never shortens a pause in force). */
  pause(ms: number): void {
    const now = this.now();
    const until = now + ms;
    if (until <= this.until) return;
    if (this.until <= now) {
      this.count++;
      this.onPause?.(ms);
    }
    this.until = until;
    this.length = ms;
  }
}
