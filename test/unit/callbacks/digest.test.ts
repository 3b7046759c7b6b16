// Digest authentication of the service's calls (issue 23): the receiver's checks (nonces it
// issued, bounded and expiring; each nonce count once; constant-time response) against the
// emulator's own client side, written separately, for both algorithms.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DigestAuth, parseDigest } from '../../../src/callbacks/digest.js';
import { digestAuthorization } from '../../../packages/emulator/src/digest.js';

const creds = { auth: 'digest' as const, username: 'gridsync', password: 'Pw-_9xyz', pathSecrets: new Map([[1001, 's3cr3t-_A']]) };
const URI = '/gridsync/callbacks/1001/s3cr3t-_A';

function clock(): { now: () => number; advance: (ms: number) => void } {
  let t = 1_000_000;
  return { now: () => t, advance: (ms) => (t += ms) };
}

/** A header for `challenge` with our own hashing, so nc, cnonce and the fields can be chosen. */
function signed(challenge: string, o: { nc?: string; password?: string; uri?: string; algorithm?: string; qop?: string } = {}): string {
  const nonce = /nonce="([^"]+)"/.exec(challenge)?.[1] as string;
  const algorithm = o.algorithm ?? 'MD5';
  const h = (s: string): string =>
    createHash(algorithm === 'MD5' ? 'md5' : 'sha256')
      .update(s)
      .digest('hex');
  const nc = o.nc ?? '00000001';
  const uri = o.uri ?? URI;
  const qop = o.qop ?? 'auth';
  const response = h(`${h(`gridsync:gridsync:${o.password ?? creds.password}`)}:${nonce}:${nc}:abc:${qop}:${h(`POST:${uri}`)}`);
  return `Digest username="gridsync", realm="gridsync", nonce="${nonce}", uri="${uri}", algorithm=${algorithm}, qop=${qop}, nc=${nc}, cnonce="abc", response="${response}"`;
}

describe('callback Digest authentication', () => {
  it('accepts what the emulator answers to its challenge, with SHA-256 and with MD5', () => {
    const auth = new DigestAuth({ now: clock().now });
    const both = auth.challenge();
    expect(both.map((c) => /algorithm=([\w-]+)/.exec(c)?.[1])).toEqual(['SHA-256', 'MD5']);
    const sha = digestAuthorization(both, 'gridsync', creds.password, 'POST', URI) as string;
    expect(sha).toMatch(/algorithm=SHA-256/);
    expect(auth.verify(sha, 'POST', URI, creds)).toBe('ok');
    const md5only = auth.challenge().filter((c) => c.includes('MD5'));
    const md5 = digestAuthorization(md5only, 'gridsync', creds.password, 'POST', URI) as string;
    expect(md5).toMatch(/algorithm=MD5/);
    expect(auth.verify(md5, 'POST', URI, creds)).toBe('ok');
  });

  it('refuses a replay of a used nonce and count, and takes a higher count once', () => {
    const auth = new DigestAuth({ now: clock().now });
    const [c] = auth.challenge();
    const first = signed(c as string, { nc: '00000001' });
    expect(auth.verify(first, 'POST', URI, creds)).toBe('ok');
    expect(auth.verify(first, 'POST', URI, creds)).toBe('refused');
    expect(auth.verify(signed(c as string, { nc: '00000003' }), 'POST', URI, creds)).toBe('ok');
    // A lower count than one already taken is a replay too.
    expect(auth.verify(signed(c as string, { nc: '00000002' }), 'POST', URI, creds)).toBe('refused');
  });

  it('refuses a wrong password, a nonce it never issued, and anything but qop=auth with a known algorithm', () => {
    const auth = new DigestAuth({ now: clock().now });
    const [c] = auth.challenge();
    expect(auth.verify(signed(c as string, { password: 'guess' }), 'POST', URI, creds)).toBe('refused');
    // Right password, but a nonce of our own making: not believed (stale, so a real service just retries).
    expect(auth.verify(signed('nonce="made-up"'), 'POST', URI, creds)).toBe('stale');
    expect(auth.verify(signed(c as string, { qop: 'auth-int' }), 'POST', URI, creds)).toBe('refused');
    expect(auth.verify(signed(c as string, { algorithm: 'SHA-512-256' }), 'POST', URI, creds)).toBe('refused');
    expect(auth.verify(signed(c as string).replace('algorithm=MD5', 'algorithm=__proto__'), 'POST', URI, creds)).toBe('refused');
    expect(auth.verify(signed(c as string).replace(', qop=auth', ''), 'POST', URI, creds)).toBe('refused');
    expect(auth.verify(`${signed(c as string)}, nc=00000009`, 'POST', URI, creds)).toBe('refused');
    expect(auth.verify(signed(c as string).replace('username="gridsync"', 'username="other"'), 'POST', URI, creds)).toBe('refused');
    expect(auth.verify(`Basic ${Buffer.from('gridsync:Pw-_9xyz').toString('base64')}`, 'POST', URI, creds)).toBe('refused');
    expect(auth.verify(undefined, 'POST', URI, creds)).toBe('refused');
    // Still unused after all that: the right answer is taken.
    expect(auth.verify(signed(c as string), 'POST', URI, creds)).toBe('ok');
  });

  it('binds the proof to the mailbox path, whatever prefix a proxy stripped', () => {
    const auth = new DigestAuth({ now: clock().now });
    const [c] = auth.challenge();
    expect(auth.verify(signed(c as string), 'POST', '/1001/s3cr3t-_A', creds)).toBe('ok');
    const other = signed(c as string, { nc: '00000002', uri: '/gridsync/callbacks/1002/s3cr3t-_A' });
    expect(auth.verify(other, 'POST', URI, creds)).toBe('refused');
  });

  it('lets a nonce expire (stale) and holds a bounded number of them', () => {
    const t = clock();
    const auth = new DigestAuth({ now: t.now, nonceTtlMs: 60_000, maxNonces: 50 });
    const [c] = auth.challenge();
    t.advance(60_001);
    expect(auth.verify(signed(c as string), 'POST', URI, creds)).toBe('stale');
    expect(auth.challenge(true)[0]).toMatch(/stale=true/);
    for (let i = 0; i < 500; i++) auth.challenge();
    expect(auth.size).toBeLessThanOrEqual(50);
  });

  it('a check without commit records nothing', () => {
    const auth = new DigestAuth({ now: clock().now });
    const [c] = auth.challenge();
    expect(auth.verify(signed(c as string), 'POST', URI, creds, false)).toBe('ok');
    expect(auth.verify(signed(c as string), 'POST', URI, creds)).toBe('ok');
  });

  it('parses quoted and bare parameters, and refuses a header that does not parse whole', () => {
    expect(parseDigest('Digest a="x\\"y", b=2,c=3')).toEqual(
      new Map([
        ['a', 'x"y'],
        ['b', '2'],
        ['c', '3'],
      ]),
    );
    expect(parseDigest('Digest a="x" junk')).toBeUndefined();
    expect(parseDigest('Digest a="x", a="y"')).toBeUndefined();
    expect(parseDigest('Basic abc')).toBeUndefined();
  });
});
