// A fake clock with timers for the daemon's scheduler: time moves only when the test advances it.
import type { Timers } from '../../src/daemon/scheduler.js';

export class FakeClock implements Timers {
  private t: number;
  private seq = 0;
  private pending = new Map<number, { at: number; fn: () => void }>();

  constructor(start: number) {
    this.t = start;
  }

  readonly now = (): number => this.t;

  set(fn: () => void, ms: number): unknown {
    const id = ++this.seq;
    this.pending.set(id, { at: this.t + ms, fn });
    return id;
  }

  clear(handle: unknown): void {
    this.pending.delete(handle as number);
  }

  /** The wall clock is set by `ms` (NTP steps it back or forward): readings jump, timers still fire after their delay. */
  step(ms: number): void {
    this.t += ms;
    for (const p of this.pending.values()) p.at += ms;
  }

  /** Delays of the timers now pending, relative to now. */
  pendingDelays(): number[] {
    return [...this.pending.values()].map((p) => p.at - this.t).sort((a, b) => a - b);
  }

  /** Moves time forward, firing due timers in order; awaits microtasks between them. */
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    for (;;) {
      await flush();
      const next = [...this.pending.entries()].sort((a, b) => a[1].at - b[1].at)[0];
      if (!next || next[1].at > end) break;
      this.pending.delete(next[0]);
      this.t = Math.max(this.t, next[1].at);
      next[1].fn();
    }
    this.t = end;
    await flush();
  }
}

async function flush(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}
