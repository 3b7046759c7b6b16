/**
 * Secrets in text that came from outside. A service may quote the API key in an error message, a
 * SOAP fault may echo the session id: such text is stored and shown (error reports in errorDir,
 * logs, the journal, `gridsync status`, `/readyz`, `/metrics`), so every value gridsync holds as a secret is
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
  return masked(text, formsOfAll(secrets));
}

/** The forms of every secret long enough to be one, in order. */
function formsOfAll(secrets: Iterable<string>): string[] {
  const forms: string[] = [];
  for (const secret of secrets) if (secret.length >= MIN_SECRET_LENGTH) forms.push(...formsOf(secret));
  return forms;
}

function masked(text: string, forms: readonly string[]): string {
  let out = text;
  for (const form of forms) if (out.includes(form)) out = out.split(form).join(SECRET_MASK);
  return out;
}

/**
 * The secrets in effect in this process: the credentials of the loaded config, and the session
 * tokens the client obtains on the way. Every sink (error reports, the log, the journal, status,
 * /readyz, /metrics) scrubs what it stores or shows against this one set, so none depends on the text having
 * been scrubbed before it arrived.
 */
const held = new Set<string>();
/**
 * Issued tokens, the most recent ISSUED_KEPT: a daemon that logs in every hour for years would
 * otherwise scrub every event against every token it was ever given (a token that old is long
 * expired, and the service echoes recent ones).
 */
const issued = new Set<string>();
const ISSUED_KEPT = 64;
/**
 * The forms of both, computed when a secret is added: every journal event is scrubbed, and
 * working out each secret's encodings per event cost more than the scrub itself.
 */
let heldForms: readonly string[] = [];

/** Adds values to the secrets in effect for the life of the process (the credentials of a loaded config). */
export function holdSecrets(values: readonly (string | undefined)[]): void {
  for (const v of values) if (v) held.add(v);
  refreshForms();
}

/** Adds tokens or session ids the service issued; only the most recent ISSUED_KEPT stay in effect. */
export function holdIssued(values: readonly (string | undefined)[]): void {
  for (const v of values) {
    if (!v) continue;
    issued.delete(v);
    issued.add(v);
  }
  for (const oldest of issued) {
    if (issued.size <= ISSUED_KEPT) break;
    issued.delete(oldest);
  }
  refreshForms();
}

function refreshForms(): void {
  heldForms = formsOfAll(new Set([...held, ...issued]));
}

/** `text` with every secret in effect masked (see {@link scrubSecrets}). */
export function scrubHeld(text: string): string {
  return heldForms.length === 0 ? text : masked(text, heldForms);
}
