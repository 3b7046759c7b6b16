// Verification of a callback from its path and Authorization header alone (issue 23).
import { describe, expect, it } from 'vitest';
import { basicAuthOk, callbackUrl, isOwnUrl, mailboxOfPath } from '../../../src/callbacks/verify.js';

const creds = { auth: 'basic' as const, username: 'gridsync', password: 'Pw-_9xyz', pathSecrets: new Map([[1001, 's3cr3t-_A']]) };
const basic = (u: string, p: string): string => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;

describe('callback verification', () => {
  it('takes the mailbox from a path whose last two segments are a known id and its secret', () => {
    expect(mailboxOfPath('/gridsync/callbacks/1001/s3cr3t-_A', creds)).toBe(1001);
    expect(mailboxOfPath('/1001/s3cr3t-_A?x=1', creds)).toBe(1001);
    expect(mailboxOfPath('/gridsync/callbacks/1001/s3cr3t-_B', creds)).toBeUndefined();
    expect(mailboxOfPath('/gridsync/callbacks/1002/s3cr3t-_A', creds)).toBeUndefined();
    expect(mailboxOfPath('/s3cr3t-_A', creds)).toBeUndefined();
    expect(mailboxOfPath('/01001/s3cr3t-_A', creds)).toBeUndefined();
  });

  it('accepts exactly the configured Basic credentials', () => {
    expect(basicAuthOk(basic('gridsync', 'Pw-_9xyz'), creds)).toBe(true);
    expect(basicAuthOk(basic('gridsync', 'Pw-_9xy'), creds)).toBe(false);
    expect(basicAuthOk(basic('other', 'Pw-_9xyz'), creds)).toBe(false);
    expect(basicAuthOk(undefined, creds)).toBe(false);
    expect(basicAuthOk('Bearer x', creds)).toBe(false);
  });

  it('recognises its own registrations by mailbox and secret, whatever public address made them', () => {
    const url = callbackUrl('https://edi.example.com/gridsync/callbacks/', 1001, 's3cr3t-_A');
    expect(url).toBe('https://edi.example.com/gridsync/callbacks/1001/s3cr3t-_A');
    expect(isOwnUrl('https://moved.example.net/cb/1001/s3cr3t-_A', 1001, 's3cr3t-_A')).toBe(true);
    expect(isOwnUrl('https://edi.example.com/other/hook', 1001, 's3cr3t-_A')).toBe(false);
    expect(isOwnUrl('not a url', 1001, 's3cr3t-_A')).toBe(false);
  });
});
