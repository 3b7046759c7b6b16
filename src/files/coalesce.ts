/**
 * Shared fsyncs: callers that ask while one runs join the next one, never the one running (it may
 * have started before the caller's rename, so it need not cover it). Eight parcels placed at once
 * cost two directory fsyncs instead of eight.
 */
export class SharedSync {
  private running = false;
  private waiters: { resolve: () => void; reject: (err: unknown) => void }[] = [];

  constructor(
    private readonly syncNow: () => Promise<void>,
    /** Called each time the last waiter has been answered. */
    private readonly onIdle?: () => void,
  ) {}

  /** Resolves once an fsync that started after this call has succeeded. */
  request(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiters.push({ resolve, reject });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    while (this.waiters.length > 0) {
      const batch = this.waiters;
      this.waiters = [];
      try {
        await this.syncNow();
        for (const w of batch) w.resolve();
      } catch (err) {
        for (const w of batch) w.reject(err);
      }
    }
    this.running = false;
    this.onIdle?.();
  }
}
