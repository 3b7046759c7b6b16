/**
 * The attempt loop every request of both protocols goes through: the rate gate, the credential,
 * one attempt, then the decision of src/api/retry.ts — wait and repeat, fail, or report an unknown
 * outcome. Every failure is scrubbed of the secrets the client holds before anything logs or
 * throws it: text the service sent (an error message, a fault) may quote them.
 */
import { GridApiError, GridConfigError, GridResponseError, UploadOutcomeUnknownError } from './errors.js';
import { decideRetry, retryDelay, retryReason, type BackoffPolicy, type RetryReason } from './retry.js';
import type { RateGate } from './rate-gate.js';
import { scrubError } from './redact.js';
import { errorFields } from '../errors/index.js';
import type { AttemptRecord } from './attempt-record.js';

/**
 * How a protocol authenticates an attempt: REST sends headers, SOAP a SessionID in the envelope.
 * `C` is what one attempt carries.
 */
export interface Credentials<C> {
  /** The credential for one authenticated attempt (logs in first when needed); `signal` ends the wait. */
  current(signal?: AbortSignal): Promise<C>;
  /** True when `err` says the credential `used` expired and one fresh login may cure it. */
  isExpired(err: unknown): boolean;
  /** Forgets `used`: the next attempt logs in again. */
  invalidate(used: C | undefined): void;
  /** Every secret value held: API key, password, tokens and session ids issued so far. */
  secrets(): readonly string[];
}

export interface RetryLogger {
  debug(obj: object, msg: string): void;
}

/** One retry, for the retry metric. */
export interface RetryNotice {
  /** RetryOptions.mailbox of the call, when it was made for one mailbox. */
  readonly mailbox: string | undefined;
  readonly reason: RetryReason;
}

/** What became of one attempt, in its debug line. */
type AttemptOutcome = 'ok' | 'retry' | 'relogin' | 'failed' | 'outcome-unknown' | 'aborted';

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
  /** The configured mailbox the call is made for (CallOptions.mailbox). */
  readonly mailbox?: string | undefined;
}

export interface RetryLoopDeps<C> {
  readonly credentials: Credentials<C>;
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
  /** Told of every 429 or 503 answer (the adaptive concurrency limits back off on them). */
  readonly onOverload?: () => void;
  /**
   * Told of every retry: a flaky service whose retries succeed shows nowhere else, as the per-retry
   * line is at debug (an outage is told once by the daemon, and its retries must not page again).
   */
  readonly onRetry?: (retry: RetryNotice) => void;
}

export class RetryLoop<C> {
  constructor(private readonly deps: RetryLoopDeps<C>) {}

  /**
   * `attempt` receives the credential, or undefined for a call without auth, and the record its
   * requests report to (method, status) for the attempt's debug line.
   */
  async run<T>(options: RetryOptions, attempt: (credential: C | undefined, record: AttemptRecord) => Promise<T>): Promise<T> {
    const { endpoint, idempotent, signal } = options;
    const d = this.deps;
    if (d.isClosed()) throw new GridConfigError('the client is closed', endpoint);
    let reloggedIn = false;
    for (let n = 1; ; n++) {
      await d.gate.pass(signal);
      const attemptStart = d.now();
      const record: AttemptRecord = {};
      let credential: C | undefined;
      try {
        credential = options.auth ? await d.credentials.current(signal) : undefined;
      } catch (thrown) {
        // The login ran its own attempts through this loop: retried here as well, one call made
        // maxAttempts² logins (each up to callMs against a service that held them), and an upload
        // that never went out was taken for one whose outcome is unknown.
        const err = scrubError(thrown, d.credentials.secrets());
        this.logAttempt(endpoint, n, attemptStart, record, signal?.aborted ? 'aborted' : 'failed', err);
        throw err;
      }
      try {
        const value = await attempt(credential, record);
        this.logAttempt(endpoint, n, attemptStart, record, 'ok');
        return value;
      } catch (thrown) {
        const err = scrubError(thrown, d.credentials.secrets());
        if (signal?.aborted || (err as Error).name === 'AbortError') {
          this.logAttempt(endpoint, n, attemptStart, record, 'aborted', err);
          throw err;
        }
        if (options.auth && d.credentials.isExpired(err) && !reloggedIn) {
          // One re-login on an expired session, then fail. Does not count as an attempt; the
          // service refused before acting, so it is safe even for an upload.
          this.logAttempt(endpoint, n, attemptStart, record, 'relogin', err);
          reloggedIn = true;
          d.credentials.invalidate(credential);
          n--;
          continue;
        }
        if (err instanceof GridApiError && (err.httpStatus === 429 || err.httpStatus === 503)) d.onOverload?.();
        const decision = decideRetry(err, idempotent);
        // A 2xx whose body could not be read: the service acted, the answer was lost.
        if (decision === 'outcome-unknown' || (!idempotent && err instanceof GridResponseError && err.httpStatus < 300)) {
          this.logAttempt(endpoint, n, attemptStart, record, 'outcome-unknown', err);
          throw new UploadOutcomeUnknownError(endpoint, attemptStart, err);
        }
        if (decision === 'fail' || n >= d.maxAttempts || !(options.mayRetry?.() ?? true)) {
          this.logAttempt(endpoint, n, attemptStart, record, 'failed', err);
          throw err;
        }
        this.logAttempt(endpoint, n, attemptStart, record, 'retry', err);
        const retryAfter = err instanceof GridApiError ? err.retryAfterMs : undefined;
        const wait = retryDelay(n, d.random(), d.backoff, retryAfter);
        d.onRetry?.({ mailbox: options.mailbox, reason: retryReason(err) });
        d.logger?.debug(
          { endpoint, attempt: n, maxAttempts: d.maxAttempts, delayMs: wait, ...errorFields(err) },
          'request failed, retrying',
        );
        // A 429 holds every request of the client (the gate); other failures wait alone.
        if (err instanceof GridApiError && err.httpStatus === 429) d.gate.pause(wait);
        else await d.sleep(wait, signal);
      }
    }
  }

  /**
   * The debug line of one attempt, REST and SOAP alike: the catalog name and method, never the
   * path (it may carry an id or a token); the status the service answered, else the failure's code.
   */
  private logAttempt(
    endpoint: string,
    attempt: number,
    start: number,
    record: AttemptRecord,
    outcome: AttemptOutcome,
    err?: unknown,
  ): void {
    const code = (err as { code?: unknown } | undefined)?.code;
    this.deps.logger?.debug(
      {
        endpoint,
        method: record.method,
        status: record.status ?? (err instanceof GridApiError ? err.httpStatus : undefined),
        durationMs: this.deps.now() - start,
        attempt,
        outcome,
        ...(typeof code === 'string' ? { code } : {}),
      },
      'request',
    );
  }
}
