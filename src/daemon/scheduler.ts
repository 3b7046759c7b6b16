/**
 * When cycles run: every `poll` interval, or when a cron window opens (cron expressions with a
 * timezone), never two at once, and with a growing delay after failures. Time comes in through
 * `now` and `timers`, so tests drive it with a fake clock instead of waiting.
 *
 * Cron windows are computed here (croner's next run after a given instant) rather than with a
 * cron library's own timers, which read the real clock: asking "does a window open in (from, to]"
 * against an injected clock is what makes windows testable, and a clock jump or a suspended VM
 * still opens a window it slept through, once, when it wakes.
 */
import { Cron } from 'croner';
import { clockGapIn, namesSkippedTime } from './clock-gaps.js';
import { SPREAD_SHARE } from './spread.js';

export interface Timers {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

export const realTimers: Timers = {
  set: (fn, ms) => setTimeout(fn, ms),
  clear: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export const MAX_BACKOFF_MS = 5 * 60_000;

/**
 * Delay before the next attempt after `failures` consecutive failed cycles (0 = the normal poll):
 * doubles from the poll interval (at least 1 s) up to `maxMs`. No jitter: one daemon per mailbox
 * set, so there is no herd to spread.
 */
export function backoffDelay(failures: number, pollMs: number, maxMs = MAX_BACKOFF_MS): number {
  if (failures <= 0) return pollMs;
  return Math.min(maxMs, Math.max(pollMs, 1000) * 2 ** Math.min(failures - 1, 20));
}

/**
 * Cron windows: which whole seconds open a window, in the configured timezone. Across a daylight
 * saving change no window is lost and a fixed time opens once: a time the clock skips opens its
 * window when the gap ends; a time it repeats opens once, at its first pass, when the expression
 * names fixed times (no `*` and no step in seconds, minutes and hours: lists and ranges are fixed,
 * as in Vixie cron), and on both passes when it has a `*` or a step (a cadence goes on).
 */
export class CronWindows {
  private readonly crons: Cron[];

  constructor(
    readonly expressions: readonly string[],
    readonly timezone?: string,
  ) {
    // Without a function a Cron only computes run times: it starts no timer. croner's default
    // counts a list (`0 1,2 * * *`) as an interval: it would open twice in a repeated hour.
    this.crons = expressions.map((e) => new Cron(e, { fixedTimeRule: 'no-wildcard', ...(timezone ? { timezone } : {}) }));
  }

  /**
   * True when a window opens at a whole second in (fromMs, toMs], however long ago `fromMs` is: a
   * window the process slept through (a suspended VM) or that the wall clock jumped over opens
   * late, once, rather than a day (or a week) later.
   */
  opensBetween(fromMs: number, toMs: number): boolean {
    const before = Math.floor(fromMs / 1000) * 1000;
    const last = Math.floor(toMs / 1000) * 1000;
    if (before >= last) return false;
    // The next run strictly after the second before the range is the first one in it, if any.
    const opens = this.crons.some((c) => {
      const next = c.nextRun(new Date(before));
      return next !== null && next.getTime() <= last;
    });
    if (opens) return true;
    const gap = clockGapIn(this.timezone, before, last);
    return gap !== undefined && this.expressions.some((e) => namesSkippedTime(e, gap));
  }

  close(): Promise<void> {
    for (const c of this.crons) c.stop();
    return Promise.resolve();
  }
}

export interface CycleSchedulerOptions {
  readonly pollMs: number;
  /** With windows, cycles run when a window opens (plus backoff retries after a failure). */
  readonly windows?: CronWindows;
  /**
   * One cycle, of every mailbox or of `only` (the mailbox a callback named); resolves true on
   * success, false on failure (it logs its own errors).
   */
  readonly cycle: (reason: string, only?: ReadonlySet<number>) => Promise<boolean>;
  readonly now?: () => number;
  readonly timers?: Timers;
  readonly maxBackoffMs?: number;
  /**
   * With windows: one more cycle this long after a window's cycle succeeds, so the acknowledgments
   * of what the window sent are fetched the same night (the daemon runs only inbound in it).
   */
  readonly windowFollowUpMs?: number;
}

/** The reason of the extra cycle after a window (inbound only). */
export const WINDOW_FOLLOW_UP = 'window-follow-up';

export class CycleScheduler {
  private readonly now: () => number;
  private readonly timers: Timers;
  private pollTimer: unknown;
  private tickTimer: unknown;
  private lastTick = 0;
  private running: Promise<void> | undefined;
  private again = false;
  /** Mailboxes asked for alone while a cycle ran: one cycle of just them follows it. */
  private readonly againOnly = new Set<number>();
  private stopped = false;
  private failureCount = 0;

  constructor(private readonly options: CycleSchedulerOptions) {
    this.now = options.now ?? Date.now;
    this.timers = options.timers ?? realTimers;
  }

  get failures(): number {
    return this.failureCount;
  }

  /** The cycle in progress, if any. */
  get inFlight(): Promise<void> | undefined {
    return this.running;
  }

  start(): void {
    if (this.options.windows) {
      this.lastTick = this.now();
      this.armTick();
    } else {
      this.trigger('start');
    }
  }

  /**
   * Runs a cycle now, or once more right after the running one: cycles never overlap. With
   * `mailboxId` (a callback's hint about one mailbox) only that mailbox is cycled, and the schedule
   * of the full cycles is left as it is: a mailbox whose calls keep coming must neither make every
   * other mailbox be polled at each call nor put their scheduled poll off.
   */
  trigger(reason: string, mailboxId?: number): void {
    if (this.stopped) return;
    if (this.running) {
      if (mailboxId === undefined) this.again = true;
      else this.againOnly.add(mailboxId);
      return;
    }
    if (mailboxId !== undefined) return this.runSome(reason, new Set([mailboxId]));
    if (this.pollTimer !== undefined) {
      this.timers.clear(this.pollTimer);
      this.pollTimer = undefined;
    }
    const startedAt = this.now();
    this.running = this.options
      .cycle(reason)
      .catch(() => false)
      .then((ok) => {
        this.failureCount = ok ? 0 : this.failureCount + 1;
        this.running = undefined;
        this.afterCycle(ok && this.options.windows !== undefined && (reason === 'window' || reason === 'retry'), startedAt);
      });
  }

  /** A cycle of some mailboxes: no full cycle's outcome, so it neither counts as a failure nor moves the next poll. */
  private runSome(reason: string, only: ReadonlySet<number>): void {
    this.running = this.options
      .cycle(reason, only)
      .catch(() => false)
      .then(() => {
        this.running = undefined;
        if (this.stopped) return;
        if (this.again) {
          this.again = false;
          this.trigger('again');
        } else this.runAgainOnly();
      });
  }

  private runAgainOnly(): void {
    if (this.againOnly.size === 0) return;
    const only = new Set(this.againOnly);
    this.againOnly.clear();
    this.runSome('again', only);
  }

  /** Delay until the next cycle that the scheduler itself will start (undefined: waits for a window). */
  nextDelay(): number | undefined {
    if (this.failureCount > 0) return backoffDelay(this.failureCount, this.options.pollMs, this.options.maxBackoffMs);
    return this.options.windows ? undefined : this.options.pollMs;
  }

  private afterCycle(windowDone: boolean, startedAt: number): void {
    if (this.stopped) return;
    if (this.again) {
      this.again = false;
      // A full cycle takes in the mailboxes asked for alone.
      this.againOnly.clear();
      this.trigger('again');
      return;
    }
    this.runAgainOnly();
    const followUp = this.options.windowFollowUpMs;
    if (windowDone && followUp) {
      this.pollTimer = this.timers.set(() => {
        this.pollTimer = undefined;
        this.trigger(WINDOW_FOLLOW_UP);
      }, followUp);
      return;
    }
    let delay = this.nextDelay();
    if (delay === undefined) return;
    // The interval counts from the cycle's start (a cycle spreads its mailboxes' polls over the
    // first part of it: spread.ts), with at least the rest of that part between two cycles.
    // (Time gone by is never negative: a wall clock stepped back during the cycle would lengthen the interval by the step.)
    if (this.failureCount === 0) delay = Math.max(delay * (1 - SPREAD_SHARE), delay - Math.max(0, this.now() - startedAt));
    this.pollTimer = this.timers.set(() => {
      this.pollTimer = undefined;
      this.trigger(this.failureCount > 0 ? 'retry' : 'poll');
    }, delay);
  }

  private armTick(): void {
    // Wake just after the next whole second, so each second is matched once.
    this.tickTimer = this.timers.set(() => this.tick(), 1000 - (this.now() % 1000) + 5);
  }

  private tick(): void {
    if (this.stopped) return;
    const now = this.now();
    // After a step back the seconds between come again, and a window among them opens again: an
    // extra cycle, never a lost window.
    if (this.options.windows?.opensBetween(this.lastTick, now)) this.trigger('window');
    this.lastTick = now;
    this.armTick();
  }

  /** No new cycles; the one in flight (see `inFlight`) is left to the caller to await or abort. */
  stop(): void {
    this.stopped = true;
    if (this.pollTimer !== undefined) this.timers.clear(this.pollTimer);
    if (this.tickTimer !== undefined) this.timers.clear(this.tickTimer);
    this.pollTimer = undefined;
    this.tickTimer = undefined;
  }
}
