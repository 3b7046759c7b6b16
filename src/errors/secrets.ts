/**
 * Secrets in text that came from outside. A service may quote the API key in an error message, a
 * SOAP fault may echo the session id: such text is stored and shown (error reports in errorDir,
 * logs, the journal, `gridsync status`, `/readyz`), so every value gridsync holds as a secret is
 * masked in it first, in the forms an echo can take (as is, percent-encoded, base64).
 */

/** What replaces a secret in text. */
export const SECRET_MASK = '***';

/** Values shorter than this are not treated as secrets: masking them would garble ordinary text. */
const MIN_SECRET_LENGTH = 6;

/** The forms in which a secret may be echoed back. */
function formsOf(secret: string): string[] {
  return [...new Set([secret, encodeURIComponent(secret), Buffer.from(secret, 'utf8').toString('base64')])];
}

/** `text` with every occurrence of each secret (in each of its forms) replaced by {@link SECRET_MASK}. */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length < MIN_SECRET_LENGTH) continue;
    for (const form of formsOf(secret)) out = out.split(form).join(SECRET_MASK);
  }
  return out;
}
