/**
 * A rate limit applies to the caller, not to one request: after a 429 every request of the client
 * — every worker, every mailbox sharing the credential — waits until the service's Retry-After
 * (or the backoff delay) has passed. Requests already on the wire cannot be recalled; no new one
 * leaves before the time is up.
 */
export class RateGate {
  private until = 0;
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
      const wait = until - this.now();
      if (wait <= 0) return;
      await this.sleep(wait, signal);
      // Served, unless another 429 extended the pause meanwhile.
      if (this.until === until) return;
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
  }
}
