import { describe, expect, it } from 'vitest';
import {
  ContentIntegrityError,
  GridApiError,
  GridConfigError,
  GridResponseError,
  GridTransportError,
  UploadOutcomeUnknownError,
  isPermanent,
  isTransient,
} from '../../../src/api/errors.js';
import {
  DEFAULT_BACKOFF,
  decideRetry,
  mayHaveReachedService,
  parseRetryAfter,
  provablyNotSent,
  retryDelay,
  type BackoffPolicy,
} from '../../../src/api/retry.js';

const NOW = Date.parse('2024-05-01T12:00:00Z');
const apiError = (status: number): GridApiError => new GridApiError('parcels.download', status, null, 'boom');
const transportError = (notSent: boolean): GridTransportError =>
  new GridTransportError('parcels.upload', notSent ? 'ECONNREFUSED' : 'ECONNRESET', 'socket trouble', notSent);

describe('parseRetryAfter', () => {
  it('reads delta-seconds', () => {
    expect(parseRetryAfter('120', NOW)).toBe(120_000);
    expect(parseRetryAfter('0', NOW)).toBe(0);
    expect(parseRetryAfter('  7 ', NOW)).toBe(7_000);
  });

  it('takes the first value of a repeated header', () => {
    expect(parseRetryAfter(['3', '99'], NOW)).toBe(3_000);
  });

  it('reads an HTTP-date relative to the injected now', () => {
    expect(parseRetryAfter('Wed, 01 May 2024 12:00:30 GMT', NOW)).toBe(30_000);
    expect(parseRetryAfter('Wed, 01 May 2024 12:00:30 GMT', NOW + 10_000)).toBe(20_000);
  });

  it('clamps a date in the past to 0', () => {
    expect(parseRetryAfter('Wed, 01 May 2024 11:59:00 GMT', NOW)).toBe(0);
  });

  it.each([
    ['absent', undefined],
    ['empty', ''],
    ['blank', '   '],
    ['garbage', 'soon-ish'],
    ['negative seconds', '-5'],
    ['fractional seconds', '1.5'],
  ])('returns undefined when %s', (_label, value) => {
    expect(parseRetryAfter(value, NOW)).toBeUndefined();
  });
});

describe('retryDelay', () => {
  const policy: BackoffPolicy = { baseDelayMs: 100, maxDelayMs: 1_000, maxRetryAfterMs: 5_000 };

  it('honours a Retry-After regardless of attempt and random', () => {
    expect(retryDelay(1, 0.5, policy, 2_000)).toBe(2_000);
    expect(retryDelay(9, 0, policy, 0)).toBe(0);
  });

  it('caps a Retry-After at maxRetryAfterMs', () => {
    expect(retryDelay(1, 0.5, policy, 60_000)).toBe(5_000);
    expect(retryDelay(1, 0.5, DEFAULT_BACKOFF, 10 * 24 * 3600_000)).toBe(DEFAULT_BACKOFF.maxRetryAfterMs);
  });

  it.each([1, 2, 3, 4, 5, 10, 30])('keeps full jitter within [0, min(max, base*2^(n-1))) at attempt %i', (attempt) => {
    const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
    expect(retryDelay(attempt, 0, policy)).toBe(0);
    const high = retryDelay(attempt, 0.999, policy);
    expect(high).toBeGreaterThanOrEqual(0);
    expect(high).toBeLessThan(ceiling);
    expect(high).toBe(Math.floor(0.999 * ceiling));
  });

  it('grows exponentially and then stops at maxDelayMs', () => {
    expect(retryDelay(1, 0.5, policy)).toBe(50);
    expect(retryDelay(2, 0.5, policy)).toBe(100);
    expect(retryDelay(3, 0.5, policy)).toBe(200);
    expect(retryDelay(20, 0.5, policy)).toBe(500);
  });

  it('with the default policy stays under 30 s', () => {
    expect(retryDelay(50, 0.999, DEFAULT_BACKOFF)).toBeLessThan(30_000);
  });
});

describe('decideRetry', () => {
  it.each([429, 500, 503])('retries HTTP %i when idempotent', (status) => {
    expect(decideRetry(apiError(status), true)).toBe('retry');
  });

  it.each([400, 401, 403, 404])('never retries HTTP %i', (status) => {
    expect(decideRetry(apiError(status), true)).toBe('fail');
    expect(decideRetry(apiError(status), false)).toBe('fail');
  });

  it('retries a 429 even when not idempotent', () => {
    expect(decideRetry(apiError(429), false)).toBe('retry');
  });

  it.each([500, 503])('reports outcome-unknown for HTTP %i when not idempotent', (status) => {
    expect(decideRetry(apiError(status), false)).toBe('outcome-unknown');
  });

  it('retries a transport error that provably was not sent, even when not idempotent', () => {
    expect(decideRetry(transportError(true), false)).toBe('retry');
    expect(decideRetry(transportError(true), true)).toBe('retry');
  });

  it('retries a transport error that may have been sent only when idempotent', () => {
    expect(decideRetry(transportError(false), true)).toBe('retry');
    expect(decideRetry(transportError(false), false)).toBe('outcome-unknown');
  });

  it('fails on a plain Error and other values', () => {
    expect(decideRetry(new Error('nope'), true)).toBe('fail');
    expect(decideRetry(new Error('nope'), false)).toBe('fail');
    expect(decideRetry('string', true)).toBe('fail');
    expect(decideRetry(undefined, true)).toBe('fail');
  });

  it('fails on a response schema error', () => {
    expect(decideRetry(new GridResponseError('parcels.list', 200, 'data', 'bad'), true)).toBe('fail');
  });
});

describe('mayHaveReachedService', () => {
  it('is false only for a 429 and for a connection never made', () => {
    expect(mayHaveReachedService(new GridApiError('parcels.upload', 429, 'RateLimitExceeded', 'slow down'))).toBe(false);
    expect(mayHaveReachedService(new GridTransportError('parcels.upload', 'ECONNREFUSED', 'refused', true))).toBe(false);
  });

  it('is true for every answer or failure after the request may have gone out', () => {
    expect(mayHaveReachedService(new GridApiError('parcels.upload', 500, 'InternalError', 'boom'))).toBe(true);
    expect(mayHaveReachedService(new GridApiError('parcels.upload', 503, null, 'down'))).toBe(true);
    expect(mayHaveReachedService(new GridApiError('parcels.upload', 400, 'InvalidParameter', 'bad'))).toBe(true);
    expect(mayHaveReachedService(new GridTransportError('parcels.upload', 'ECONNRESET', 'reset', false))).toBe(true);
    expect(mayHaveReachedService(new GridResponseError('parcels.upload', 200, '(body)', 'not JSON'))).toBe(true);
    expect(mayHaveReachedService(new Error('local failure'))).toBe(true);
  });
});

describe('provablyNotSent', () => {
  it.each(['ECONNREFUSED', 'UND_ERR_CONNECT_TIMEOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH'])(
    'is true for %s',
    (code) => {
      expect(provablyNotSent(code)).toBe(true);
    },
  );

  it.each(['ECONNRESET', 'UND_ERR_SOCKET', 'UND_ERR_HEADERS_TIMEOUT', 'ETIMEDOUT', 'EPIPE', ''])('is false for %s', (code) => {
    expect(provablyNotSent(code)).toBe(false);
  });
});

describe('GridApiError.retryable, isPermanent, isTransient', () => {
  it.each([429, 500, 502, 503, 504])('HTTP %i is retryable and transient', (status) => {
    const err = apiError(status);
    expect(err.retryable).toBe(true);
    expect(isPermanent(err)).toBe(false);
    expect(isTransient(err)).toBe(true);
  });

  it.each([400, 401, 403, 404, 409])('HTTP %i is not retryable and permanent', (status) => {
    const err = apiError(status);
    expect(err.retryable).toBe(false);
    expect(isPermanent(err)).toBe(true);
    expect(isTransient(err)).toBe(false);
  });

  it('treats response and config errors as permanent', () => {
    for (const err of [new GridResponseError('parcels.list', 200, '(body)', 'not json'), new GridConfigError('bad config', 'client')]) {
      expect(isPermanent(err)).toBe(true);
      expect(isTransient(err)).toBe(false);
    }
  });

  it('treats transport, unknown-outcome and integrity errors as transient', () => {
    const errs = [
      transportError(true),
      transportError(false),
      new UploadOutcomeUnknownError('parcels.upload', NOW, new Error('reset')),
      new ContentIntegrityError('parcels.download', 7, 'truncated', 'short body'),
    ];
    for (const err of errs) {
      expect(isPermanent(err)).toBe(false);
      expect(isTransient(err)).toBe(true);
    }
  });

  it('treats a non-Grid error as neither permanent nor transient', () => {
    expect(isPermanent(new Error('x'))).toBe(false);
    expect(isTransient(new Error('x'))).toBe(false);
    expect(isTransient(null)).toBe(false);
  });
});
