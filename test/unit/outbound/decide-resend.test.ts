/** The resend policy after a failed upload attempt: a resend only when the request provably never reached the service. */
import { describe, expect, it } from 'vitest';
import {
  GridApiError,
  GridResponseError,
  GridTransportError,
  UploadOutcomeUnknownError,
  UploadSourceChangedError,
} from '../../../src/api/index.js';
import { decideResend } from '../../../src/outbound/index.js';

const api = (status: number): GridApiError => new GridApiError('parcels.upload', status, null, 'x');
const transport = (notSent: boolean): GridTransportError =>
  new GridTransportError('parcels.upload', notSent ? 'ECONNREFUSED' : 'ECONNRESET', 'x', notSent);

describe('decideResend', () => {
  it('never resends what may have reached the service: reconcile first', () => {
    expect(decideResend(new UploadOutcomeUnknownError('parcels.upload', 0, new Error('x')), 'uploading', 1, 5)).toBe('reconcile');
    expect(decideResend(transport(false), 'uploading', 1, 5)).toBe('reconcile');
    expect(decideResend(api(500), 'uploading', 1, 5)).toBe('reconcile');
    expect(decideResend(api(503), 'uploading', 9, 5)).toBe('reconcile');
    // An unreadable 2xx answer (the soak's out-69.edi) and any unknown error: the service may have the file.
    expect(decideResend(new GridResponseError('parcels.upload', 200, '(body)', 'not JSON'), 'uploading', 1, 5)).toBe('reconcile');
    expect(decideResend(new Error('socket hang up'), 'uploading', 1, 5)).toBe('reconcile');
  });

  it('resends after a 429 or no connection at all, and gives up only on answered errors', () => {
    expect(decideResend(api(429), 'uploading', 1, 5)).toBe('resend');
    expect(decideResend(transport(true), 'uploading', 1, 5)).toBe('resend');
    expect(decideResend(api(429), 'uploading', 5, 5)).toBe('give-up');
    expect(decideResend(transport(true), 'uploading', 50, 5)).toBe('resend');
  });

  it('refuses a copy found changed before any byte went out; one that changed during the upload may have reached the service', () => {
    const changed = (notSent: boolean) =>
      new UploadSourceChangedError('/p/x.edi', 'is 10 bytes, not the 20 bytes it was claimed with', notSent);
    expect(decideResend(changed(true), 'uploading', 1, 5)).toBe('refuse');
    expect(decideResend(changed(false), 'uploading', 1, 5)).toBe('reconcile');
  });

  it('rejects what the service refused for good', () => {
    for (const s of [400, 401, 403, 404, 413]) expect(decideResend(api(s), 'uploading', 1, 5)).toBe('reject');
  });

  it('a failure before the attempt was journalled (still claimed) is retried, never reconciled', () => {
    expect(decideResend(new Error('SQLITE_BUSY'), 'claimed', 1, 5)).toBe('retry');
    expect(decideResend(api(500), 'claimed', 5, 5)).toBe('give-up');
  });
});
