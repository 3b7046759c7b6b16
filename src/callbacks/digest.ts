/**
 * HTTP Digest authentication of the service's calls (RFC 7616, qop=auth, MD5 or SHA-256): the
 * receiver issues the nonces, keeps a bounded number of them for a limited time, accepts each
 * nonce count once and in increasing order (a captured header replayed gets nothing), and compares
 * the response in constant time. The password never crosses the wire, only a hash bound to our
 * nonce, the method and the URL.
 */
import { createHash, randomBytes } from 'node:crypto';
import { DEFAULTS } from '../config/defaults.js';
import type { CallbackCredentials } from './credentials.js';
import { sameSecret } from './verify.js';

/** The realm of both schemes; fixed, since the service hashes the password with it (Digest). */
export const AUTH_REALM = 'gridsync';

/** RFC 7616 names → node:crypto names, in the order the challenge offers them. */
const ALGORITHMS: ReadonlyMap<string, string> = new Map([
  ['SHA-256', 'sha256'],
  ['MD5', 'md5'],
]);

const hash = (algorithm: string, text: string): string => createHash(algorithm).update(text, 'utf8').digest('hex');

/** The auth-params of a `Digest …` header; undefined when it is not one or does not parse. */
export function parseDigest(header: string | undefined): Map<string, string> | undefined {
  const m = /^Digest\s+(.{1,4096})$/is.exec(header ?? '');
  if (!m) return undefined;
  const params = new Map<string, string>();
  const re = /\s*([\w-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s",]+))\s*(,|$)/gy;
  const text = m[1] as string;
  let last = 0;
  for (let p = re.exec(text); p; p = re.exec(text)) {
    const key = (p[1] as string).toLowerCase();
    // A parameter given twice is ambiguous: whichever one a proxy read, refuse both.
    if (params.has(key)) return undefined;
    params.set(key, p[2] !== undefined ? p[2].replace(/\\(.)/g, '$1') : (p[3] as string));
    last = re.lastIndex;
    if (p[4] === '') break;
  }
  return last === text.length && params.size ? params : undefined;
}

/** The last two path segments (mailbox id and secret): what a proxy keeps whatever prefix it strips. */
const tail = (uri: string): string => (uri.split('?')[0] ?? '').split('/').slice(-2).join('/');

export type DigestVerdict = 'ok' | 'stale' | 'refused';

export interface DigestOptions {
  readonly now: () => number;
  readonly nonceTtlMs?: number;
  readonly maxNonces?: number;
}

/** The nonces issued by one receiver and the checks of the calls that answer them. */
export class DigestAuth {
  /** nonce → when it was issued and the highest nonce count taken with it. Insertion order is age. */
  private readonly nonces = new Map<string, { issuedAt: number; lastNc: number }>();
  private readonly ttlMs: number;
  private readonly max: number;

  constructor(private readonly o: DigestOptions) {
    this.ttlMs = o.nonceTtlMs ?? DEFAULTS.callbacks.digestNonceTtlMs;
    this.max = o.maxNonces ?? DEFAULTS.callbacks.digestMaxNonces;
  }

  /** Nonces held now (for the bound's test). */
  get size(): number {
    return this.nonces.size;
  }

  /** The WWW-Authenticate values of a 401: a fresh nonce, SHA-256 offered before MD5. */
  challenge(stale = false): string[] {
    const now = this.o.now();
    for (const [n, v] of this.nonces) {
      if (this.nonces.size < this.max && now - v.issuedAt <= this.ttlMs) break;
      this.nonces.delete(n);
    }
    const nonce = randomBytes(24).toString('base64url');
    this.nonces.set(nonce, { issuedAt: now, lastNc: 0 });
    return [...ALGORITHMS.keys()].map(
      (a) => `Digest realm="${AUTH_REALM}", qop="auth", algorithm=${a}, nonce="${nonce}"${stale ? ', stale=true' : ''}`,
    );
  }

  /**
   * Whether `header` proves the credentials for this request. `stale`: the proof was right but for
   * a nonce that expired (or that we forgot), so the service may simply retry with a fresh one.
   * With `commit` false nothing is recorded (the path was wrong: the check only costs the same time).
   */
  verify(header: string | undefined, method: string, requestUrl: string, creds: CallbackCredentials, commit = true): DigestVerdict {
    const p = parseDigest(header);
    const get = (k: string): string => p?.get(k) ?? '';
    // Absent means MD5 (RFC 7616 §3.4); an unknown name still costs a hash, then is refused.
    const named = ALGORITHMS.get((p?.get('algorithm') ?? 'MD5').toUpperCase());
    const algorithm = named ?? 'sha256';
    const [nonce, nc, cnonce, uri] = [get('nonce'), get('nc'), get('cnonce'), get('uri')];
    // Computed even when the header is malformed, so a refusal takes as long as a wrong password.
    const ha1 = hash(algorithm, `${get('username')}:${AUTH_REALM}:${creds.password}`);
    const expected = hash(algorithm, `${ha1}:${nonce}:${nc}:${cnonce}:auth:${hash(algorithm, `${method}:${uri}`)}`);
    const proven = sameSecret(get('response').toLowerCase(), expected) && sameSecret(get('username'), creds.username);
    const wellFormed =
      p !== undefined &&
      named !== undefined &&
      get('qop') === 'auth' &&
      get('realm') === AUTH_REALM &&
      /^[0-9a-f]{8}$/i.test(nc) &&
      cnonce.length > 0 &&
      !/^true$/i.test(get('userhash')) &&
      // The signed URL must name the mailbox and secret this request came to.
      tail(uri) === tail(requestUrl);
    if (!proven || !wellFormed) return 'refused';
    const held = this.nonces.get(nonce);
    if (!held || this.o.now() - held.issuedAt > this.ttlMs) {
      if (held && commit) this.nonces.delete(nonce);
      return 'stale';
    }
    const count = Number.parseInt(nc, 16);
    if (count <= held.lastNc) return 'refused';
    if (commit) held.lastNc = count;
    return 'ok';
  }
}
