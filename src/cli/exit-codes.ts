/**
 * Exit codes, decided from error codes in one place (docs/errors.md has the table):
 *   0 all done · 1 something is left that a later run can finish (service unreachable, items
 *   failed or deferred, interrupted) · 2 the operator must change something first (config,
 *   credentials, folders, journal lock or corruption, usage).
 */
import { isGridsyncError } from '../errors/index.js';

export const EXIT_OK = 0;
export const EXIT_INCOMPLETE = 1;
export const EXIT_OPERATOR = 2;

/** Codes after which running again later, unchanged, can succeed. */
const RETRYABLE_LATER = new Set(['STARTUP_UNREACHABLE', 'STARTUP_STOPPED']);

export function exitCodeFor(err: unknown): number {
  if (isGridsyncError(err) && RETRYABLE_LATER.has(err.code)) return EXIT_INCOMPLETE;
  return EXIT_OPERATOR;
}

/** One line for stderr: the message and the code, never a stack trace. */
export function describeForOperator(err: unknown): string {
  if (isGridsyncError(err)) return `${err.message} [${err.code}]`;
  const sys = err as NodeJS.ErrnoException;
  if (err instanceof Error) return sys.code ? `${err.message} [${sys.code}]` : err.message;
  return String(err);
}
