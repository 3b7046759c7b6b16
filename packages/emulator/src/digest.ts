/**
 * The service's side of HTTP Digest (RFC 7616) for callback deliveries with `httpAuthType: Digest`:
 * read the receiver's 401 challenges, take the strongest one we can answer (SHA-256 before MD5,
 * qop=auth only), and build the Authorization header of the retry. Kept apart from the daemon's
 * receiver on purpose: two implementations that must agree are what the tests exercise.
 */
import { createHash, randomBytes } from 'node:crypto';

const ALGORITHMS: ReadonlyMap<string, string> = new Map([
  ['SHA-256', 'sha256'],
  ['MD5', 'md5'],
]);

interface Challenge {
  readonly realm: string;
  readonly nonce: string;
  readonly algorithm: string;
  readonly opaque: string | undefined;
}

/** The Digest challenges among `WWW-Authenticate` values that offer qop=auth and an algorithm we know. */
function challenges(values: readonly string[]): Challenge[] {
  const out: Challenge[] = [];
  for (const v of values) {
    if (!/^Digest\s/i.test(v)) continue;
    const params = new Map(
      [...v.matchAll(/([\w-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s",]+))/g)].map((m) => [m[1]?.toLowerCase(), m[2] ?? m[3] ?? '']),
    );
    const algorithm = (params.get('algorithm') ?? 'MD5').toUpperCase();
    const qops = (params.get('qop') ?? '').split(',').map((q) => q.trim());
    const realm = params.get('realm');
    const nonce = params.get('nonce');
    if (realm === undefined || !nonce || !qops.includes('auth') || !ALGORITHMS.has(algorithm)) continue;
    out.push({ realm, nonce, algorithm, opaque: params.get('opaque') });
  }
  return out.sort((a, b) => [...ALGORITHMS.keys()].indexOf(a.algorithm) - [...ALGORITHMS.keys()].indexOf(b.algorithm));
}

/** The Authorization header answering the best challenge for `method uri`, or undefined when none can be answered. */
export function digestAuthorization(
  wwwAuthenticate: readonly string[],
  username: string,
  password: string,
  method: string,
  uri: string,
): string | undefined {
  const c = challenges(wwwAuthenticate)[0];
  if (!c) return undefined;
  const h = (text: string): string =>
    createHash(ALGORITHMS.get(c.algorithm) as string)
      .update(text, 'utf8')
      .digest('hex');
  const nc = '00000001';
  const cnonce = randomBytes(12).toString('hex');
  const response = h(`${h(`${username}:${c.realm}:${password}`)}:${c.nonce}:${nc}:${cnonce}:auth:${h(`${method}:${uri}`)}`);
  const q = (s: string): string => `"${s.replace(/["\\]/g, '\\$&')}"`;
  return [
    `Digest username=${q(username)}`,
    `realm=${q(c.realm)}`,
    `nonce=${q(c.nonce)}`,
    `uri=${q(uri)}`,
    `algorithm=${c.algorithm}`,
    'qop=auth',
    `nc=${nc}`,
    `cnonce=${q(cnonce)}`,
    `response=${q(response)}`,
    ...(c.opaque !== undefined ? [`opaque=${q(c.opaque)}`] : []),
  ].join(', ');
}
