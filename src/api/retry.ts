/**
 * The retry rules of the service as small pure functions: what to retry, how long to wait.
 * 429/500/503 and network errors are retried with exponential backoff and full jitter, honouring
 * Retry-After; 400/401/403/404 never. A request that is not idempotent (an upload) is retried only
 * when it provably did not reach the service: otherwise its outcome is unknown and the caller
 * reconciles (see mayHaveReachedService).
 */
import { ContentIntegrityError, GridApiError, GridTransportError } from './errors.js';

export interface BackoffPolicy {
  /** First delay before jitter. Default 500 ms. */
  readonly baseDelayMs: number;
  /** Cap of the exponential delay. Default 30 s. */
  readonly maxDelayMs: number;
  /** Cap of a Retry-After the service asks for (an absurd value must not stall the daemon for days). Default 5 min. */
  readonly maxRetryAfterMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { baseDelayMs: 500, maxDelayMs: 30_000, maxRetryAfterMs: 300_000 };

/**
 * Parses a Retry-After header: delta-seconds or an HTTP-date. Returns milliseconds from `now`, or
 * undefined when absent or unparseable (the jittered backoff applies then).
 */
export function parseRetryAfter(value: string | string[] | undefined, now: number): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined || v.trim() === '') return undefined;
  const t = v.trim();
  if (/^\d+$/.test(t)) return Number(t) * 1000;
  // Other numbers ("-5", "1.5") are not valid delta-seconds; Date.parse would read them as years.
  if (/^[-+]?\d*\.?\d+$/.test(t)) return undefined;
  const date = Date.parse(t);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** Delay before attempt `attempt + 1` (attempt counts from 1): Retry-After if given, else full jitter. */
export function retryDelay(attempt: number, random: number, policy: BackoffPolicy, retryAfterMs?: number): number {
  if (retryAfterMs !== undefined) return Math.min(retryAfterMs, policy.maxRetryAfterMs);
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.floor(random * ceiling);
}

export type RetryDecision = 'retry' | 'fail' | 'outcome-unknown';

/**
 * The one rule for "did this failed request reach the service?": false only when it provably did
 * not act on it — a 429 (refused before acting) or no connection made at all. Everything else,
 * including an error after the body went out or an unreadable 2xx, may have reached it. A request
 * that is not idempotent is sent again blindly only when this is false; otherwise the caller
 * reconciles first.
 */
export function mayHaveReachedService(err: unknown): boolean {
  if (err instanceof GridApiError && err.httpStatus === 429) return false;
  if (err instanceof GridTransportError && err.notSent) return false;
  return true;
}

/** What to do after a failed attempt. */
export function decideRetry(err: unknown, idempotent: boolean): RetryDecision {
  // A body that broke off is a network failure that happened late: repeat what is safe to repeat.
  if (err instanceof ContentIntegrityError && err.reason === 'truncated') return idempotent ? 'retry' : 'fail';
  if (err instanceof GridApiError && !err.retryable) return 'fail';
  if (!(err instanceof GridApiError) && !(err instanceof GridTransportError)) return 'fail';
  if (idempotent || !mayHaveReachedService(err)) return 'retry';
  return 'outcome-unknown';
}

/**
 * Why an attempt was retried, as the retry metric labels it: a few fixed values, never the
 * endpoint's path, an id or the service's message, so the series stay few.
 */
export const RETRY_REASONS = ['http_429', 'http_5xx', 'transport', 'truncated'] as const;
export type RetryReason = (typeof RETRY_REASONS)[number];

/** The reason of a failure decideRetry answered `retry` for. */
export function retryReason(err: unknown): RetryReason {
  if (err instanceof GridApiError) return err.httpStatus === 429 ? 'http_429' : 'http_5xx';
  if (err instanceof ContentIntegrityError) return 'truncated';
  return 'transport';
}

/** System and undici codes that prove the request never left (no connection was made). */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'UND_ERR_CONNECT_TIMEOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

export const provablyNotSent = (code: string): boolean => NOT_SENT_CODES.has(code);
