/**
 * Redaction of failures, once, where every attempt of both protocols ends (the retry loop): an
 * error message, a SOAP fault, a proxy page may quote the API key, the password or a session id
 * the client sent. Every string the error carries — message, stack, the service's text fields —
 * and those of its causes are passed through scrubSecrets before anyone logs, stores or shows it.
 */
import { scrubSecrets } from '../errors/index.js';

/** Causes followed at most this deep (a cycle of causes must not loop). */
const MAX_CAUSES = 8;

/** `err` with the secrets masked in place (errors are thrown on, so their identity is kept). */
export function scrubError(err: unknown, secrets: readonly string[]): unknown {
  if (secrets.length === 0) return err;
  let e: unknown = err;
  for (let depth = 0; e instanceof Error && depth < MAX_CAUSES; depth++) {
    for (const key of Object.getOwnPropertyNames(e)) {
      const own = Object.getOwnPropertyDescriptor(e, key);
      if (typeof own?.value !== 'string') continue;
      const clean = scrubSecrets(own.value, secrets);
      // Readonly fields of our errors are plain data properties: redefine them, keeping their flags.
      if (clean !== own.value && own.configurable) Object.defineProperty(e, key, { ...own, value: clean });
    }
    e = e.cause;
  }
  return err;
}
