/**
 * The attempt loop every request goes through: auth headers, one attempt, then the decision of
 * src/api/retry.ts — wait and repeat, fail, or report an unknown outcome.
 */
import { GridApiError, GridConfigError, GridResponseError, UploadOutcomeUnknownError } from './errors.js';
import { decideRetry, retryDelay, type BackoffPolicy } from './retry.js';
import type { RateGate } from './rate-gate.js';
import type { Session } from './session.js';
import { errorFields } from '../errors/index.js';

export interface RetryLogger {
  warn(obj: object, msg: string): void;
}

export interface RetryOptions {
  /** Catalog name of the endpoint, for errors and logs. */
  readonly endpoint: string;
  /** Safe to repeat after it may have reached the service. */
  readonly idempotent: boolean;
  /** Send the session's credentials. */
  readonly auth: boolean;
  readonly signal?: AbortSignal | undefined;
  /** Asked after a retryable failure: false stops retrying (a download that already wrote content). */
  readonly mayRetry?: () => boolean;
}

export interface RetryLoopDeps {
  readonly session: Session;
  /** Shared by every request of the client: a 429 holds them all. */
  readonly gate: RateGate;
  /** Attempts per call, the first included. */
  readonly maxAttempts: number;
  readonly backoff: BackoffPolicy;
  readonly now: () => number;
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Jitter source in [0, 1). */
  readonly random: () => number;
  readonly logger?: RetryLogger | undefined;
  /** Refuses new calls once the client is closed. */
  readonly isClosed: () => boolean;
}

export class RetryLoop {
  constructor(private readonly deps: RetryLoopDeps) {}

  async run<T>(options: RetryOptions, attempt: (headers: Record<string, string>) => Promise<T>): Promise<T> {
    const { endpoint, idempotent, signal } = options;
    const d = this.deps;
    if (d.isClosed()) throw new GridConfigError('the client is closed', endpoint);
    let reloggedIn = false;
    for (let n = 1; ; n++) {
      await d.gate.pass(signal);
      const attemptStart = d.now();
      try {
        const headers = options.auth ? await d.session.headers() : {};
        return await attempt(headers);
      } catch (err) {
        if (signal?.aborted || (err as Error).name === 'AbortError') throw err;
        if (d.session.isExpired(err) && !reloggedIn) {
          // One re-login on InvalidSession, then fail. Does not count as an attempt.
          reloggedIn = true;
          d.session.invalidate();
          n--;
          continue;
        }
        const decision = decideRetry(err, idempotent);
        if (decision === 'outcome-unknown') throw new UploadOutcomeUnknownError(endpoint, attemptStart, err);
        // A 2xx whose body could not be read: the service acted, the answer was lost.
        if (!idempotent && err instanceof GridResponseError && err.httpStatus < 300)
          throw new UploadOutcomeUnknownError(endpoint, attemptStart, err);
        if (decision === 'fail' || n >= d.maxAttempts || !(options.mayRetry?.() ?? true)) throw err;
        const retryAfter = err instanceof GridApiError ? err.retryAfterMs : undefined;
        const wait = retryDelay(n, d.random(), d.backoff, retryAfter);
        d.logger?.warn(
          { endpoint, attempt: n, maxAttempts: d.maxAttempts, delayMs: wait, ...errorFields(err) },
          'request failed, retrying',
        );
        // A 429 holds every request of the client (the gate); other failures wait alone.
        if (err instanceof GridApiError && err.httpStatus === 429) d.gate.pause(wait);
        else await d.sleep(wait, signal);
      }
    }
  }
}
