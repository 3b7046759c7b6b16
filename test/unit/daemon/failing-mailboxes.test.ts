// Which failures leave one mailbox out and which fail the whole cycle, and the pause a failing
// mailbox sits out (the errors are the client's and the journal's own, built as they throw them).
import { describe, expect, it } from 'vitest';
import { GridApiError, GridResponseError, GridTransportError } from '../../../src/api/index.js';
import { SoapFaultError } from '../../../src/api/soap/errors.js';
import { FailingMailboxes, failsEveryMailbox } from '../../../src/daemon/failing-mailboxes.js';
import { JournalUnavailableError } from '../../../src/journal/index.js';

const api = (status: number, code: string | null = null) => new GridApiError('parcels.pendingInboxList', status, code as never, 'no');

describe('failsEveryMailbox', () => {
  it('the service, the key or the journal: the whole cycle', () => {
    expect(failsEveryMailbox(new GridTransportError('parcels.pendingInboxList', 'ECONNREFUSED', 'refused', true))).toBe(true);
    for (const s of [429, 500, 502, 503, 504, 401]) expect(failsEveryMailbox(api(s))).toBe(true);
    expect(failsEveryMailbox(api(404))).toBe(true); // no such endpoint: a proxy, a wrong baseUrl
    expect(failsEveryMailbox(new JournalUnavailableError('postgres://db', 'connection refused'))).toBe(true);
    expect(failsEveryMailbox(Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' }))).toBe(true);
  });

  it('one mailbox refused, gone, unreadable or its folders unusable: that mailbox alone', () => {
    expect(failsEveryMailbox(api(403, 'AccessDenied'))).toBe(false);
    expect(failsEveryMailbox(api(404, 'ObjectNotFound'))).toBe(false);
    expect(failsEveryMailbox(api(400, 'InvalidParameter'))).toBe(false);
    expect(failsEveryMailbox(new GridResponseError('parcels.pendingInboxList', 200, 'data[3].parcelId', 'not a number'))).toBe(false);
    expect(failsEveryMailbox(Object.assign(new Error('permission denied'), { code: 'EACCES' }))).toBe(false);
    // Over SOAP a refusal is a Client fault carrying the REST status; a Server fault is the service's.
    const fault = (faultCode: 'Client' | 'Server', errorCode: number) =>
      new SoapFaultError('GetInboxList', {
        faultCode,
        errorCode,
        hasErrorCode: true,
        message: 'm',
        errorItem: '',
        errorString: '',
      } as never);
    expect(failsEveryMailbox(fault('Client', 3))).toBe(false);
    expect(failsEveryMailbox(fault('Server', 11))).toBe(true);
  });
});

describe('FailingMailboxes', () => {
  it('doubles the pause from the poll interval (at least 1 s), and forgets the mailbox once it succeeds', () => {
    const f = new FailingMailboxes(500);
    expect(f.due('a', 0)).toBe(true);
    expect(f.failed('a', 'refused', 0)).toEqual({ mailbox: 'a', failures: 1, error: 'refused', retryInMs: 1000 });
    expect(f.due('a', 999)).toBe(false);
    expect(f.due('b', 999)).toBe(true);
    expect(f.due('a', 1000)).toBe(true);
    expect(f.failed('a', 'refused again', 1000).retryInMs).toBe(2000);
    expect(f.list(1500)).toEqual([{ mailbox: 'a', failures: 2, error: 'refused again', retryInMs: 1500 }]);
    expect(f.any).toBe(true);
    expect(f.succeeded('a')).toBe(2);
    expect(f.succeeded('a')).toBe(0);
    expect(f.any).toBe(false);
    expect(f.list(0)).toEqual([]);
    // A mailbox another instance took over is dropped without a word (it did not answer here).
    f.failed('b', 'refused', 0);
    f.forget('b');
    expect(f.any).toBe(false);
    expect(f.due('b', 1)).toBe(true);
  });

  it('a wall clock stepped back never stretches the pause', () => {
    const f = new FailingMailboxes(60_000);
    f.failed('a', 'refused', 10_000_000);
    expect(f.due('a', 10_000_000 + 59_999)).toBe(false);
    expect(f.due('a', 10_000_000 - 3_600_000)).toBe(true);
    expect(f.list(10_000_000 - 3_600_000)[0]?.retryInMs).toBe(60_000);
  });
});
