/**
 * The shell around the limit of concurrency-limit.ts: it times the calls a queue makes, tells the
 * limit what they did, and sets the concurrency of the queues that follow it. One per mailbox and
 * direction (`inbox.concurrency`, `outbox.concurrency`): a slot of those queues holds one transfer,
 * so its time is the call's; downloads and uploads of different sizes keep separate limits. The
 * service's "too much" is the caller's, though: a 429/503 seen by any call of the client counts for
 * every limit whose call was in flight then (`overloadAnswers`), as the rate gate holds every
 * request after a 429.
 */
import type { EventLoopUtilization } from 'node:perf_hooks';
import { GridApiError, GridTransportError } from './errors.js';
import { initialLimitState, LIMIT_RULES, nextLimit, resumedAfterIdle, type CallSample, type LimitState } from './concurrency-limit.js';

/** A fixed number of calls at once, or `adaptive`: between 1 and the configured maximum. */
export type ConcurrencySetting = number | 'adaptive';

/** The part of a queue whose concurrency follows the limit (p-queue's). */
export interface Throttled {
  concurrency: number;
}

export interface CallConcurrencyOptions {
  /** Milliseconds on a monotonic clock. */
  readonly now?: () => number;
  /** 429/503 answers the client has seen so far (MailboxTransport.overloadAnswers). */
  readonly overloadAnswers?: () => number;
}

export class CallConcurrency {
  private state: LimitState | undefined;
  private readonly fixed: number;
  private readonly followers = new Map<Throttled, number>();
  private readonly now: () => number;
  private inFlight = 0;
  /** When the last call ended: idle since for `idleMs`, the queue starts its window afresh. */
  private settledAt = -Infinity;
  /** The event loop's utilization when the limit's current window began. */
  private loopAtWindow: EventLoopUtilization;

  constructor(
    setting: ConcurrencySetting,
    private readonly max: number,
    private readonly options: CallConcurrencyOptions = {},
  ) {
    this.now = options.now ?? (() => performance.now());
    this.loopAtWindow = performance.eventLoopUtilization();
    this.fixed = setting === 'adaptive' ? 0 : Math.max(1, setting);
    if (setting === 'adaptive') this.state = initialLimitState(max, this.now());
  }

  /** Calls at once now. */
  get limit(): number {
    return this.state?.limit ?? this.fixed;
  }

  /** Keeps `queue` at `factor` × the limit from now on, until the returned function is called. */
  follow(queue: Throttled, factor = 1): () => void {
    this.followers.set(queue, factor);
    queue.concurrency = factor * this.limit;
    return () => this.followers.delete(queue);
  }

  /** Runs one call of a slot and feeds its outcome to the limit. */
  async measure<T>(call: () => Promise<T>): Promise<T> {
    if (!this.state) return call();
    const startedAt = this.now();
    if (this.inFlight === 0 && startedAt - this.settledAt >= LIMIT_RULES.idleMs) {
      this.state = resumedAfterIdle(this.state, startedAt);
      this.loopAtWindow = performance.eventLoopUtilization();
    }
    const overloads = this.options.overloadAnswers?.() ?? 0;
    const sample = (outcome: CallSample['outcome']): void => {
      const seen = (this.options.overloadAnswers?.() ?? 0) > overloads;
      this.record({
        startedAt,
        latencyMs: this.now() - startedAt,
        outcome: seen ? 'overload' : outcome,
        inFlight: this.inFlight,
        loopBusy: performance.eventLoopUtilization(this.loopAtWindow).utilization,
      });
    };
    this.inFlight++;
    try {
      const result = await call();
      sample('ok');
      return result;
    } catch (err) {
      const outcome = outcomeOf(err);
      if (outcome) sample(outcome);
      throw err;
    } finally {
      this.inFlight--;
      this.settledAt = this.now();
    }
  }

  private record(sample: CallSample): void {
    const before = this.limit;
    const windowStart = this.state?.windowStart;
    this.state = nextLimit(this.state as LimitState, sample, this.now(), this.max);
    if (this.state.windowStart !== windowStart) this.loopAtWindow = performance.eventLoopUtilization();
    if (this.limit === before) return;
    for (const [queue, factor] of this.followers) queue.concurrency = factor * this.limit;
  }
}

/** What a failed call says about the load; undefined: nothing (a missing parcel, a full disk, …). */
function outcomeOf(err: unknown): CallSample['outcome'] | undefined {
  if (err instanceof GridApiError && (err.httpStatus === 429 || err.httpStatus === 503)) return 'overload';
  if (err instanceof GridTransportError && /TIMEOUT|DEADLINE/.test(err.transportCode)) return 'timeout';
  return undefined;
}
