/**
 * Deciding whether a call comes from the service, from its path and Authorization header alone
 * (nothing of the body is trusted): pure functions, every comparison in constant time so a
 * forger learns nothing from how long a refusal takes.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { CallbackCredentials } from './credentials.js';

/** Equal strings, compared in time independent of where they differ (hashes have one length). */
export function sameSecret(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}

/** The callback URL of a mailbox: the public URL plus `/<mailboxId>/<secret>`. */
export function callbackUrl(publicUrl: string, mailboxId: number, pathSecret: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/${mailboxId}/${pathSecret}`;
}

/** Whether a registered URL is one of ours for this mailbox, whatever public address it was made with. */
export function isOwnUrl(url: string, mailboxId: number, pathSecret: string): boolean {
  try {
    return sameSecret(new URL(url).pathname.split('/').slice(-2).join('/'), `${mailboxId}/${pathSecret}`);
  } catch {
    return false;
  }
}

/**
 * The mailbox a request path names, when its secret matches: the last two segments (a proxy may
 * keep or strip the public URL's prefix). Undefined for anything else.
 */
export function mailboxOfPath(rawUrl: string, creds: CallbackCredentials): number | undefined {
  const pathname = rawUrl.split('?')[0] ?? '';
  const [idText, given] = pathname.split('/').slice(-2);
  if (idText === undefined || given === undefined || !/^[1-9]\d{0,15}$/.test(idText)) return undefined;
  const id = Number(idText);
  const expected = creds.pathSecrets.get(id);
  // An unknown mailbox still costs one comparison, like a known one with a wrong secret.
  const ok = sameSecret(given, expected ?? '\u0000unknown mailbox');
  return ok && expected !== undefined ? id : undefined;
}

/** Whether an Authorization header carries the expected Basic credentials. */
export function basicAuthOk(header: string | undefined, creds: CallbackCredentials): boolean {
  const m = /^Basic\s+([A-Za-z0-9+/=]{1,1024})\s*$/i.exec(header ?? '');
  const given = m ? Buffer.from(m[1] as string, 'base64').toString('utf8') : '';
  return sameSecret(given, `${creds.username}:${creds.password}`) && m !== null;
}
