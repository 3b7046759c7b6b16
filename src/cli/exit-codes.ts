/**
 * Exit codes, decided from error codes by the one error table (src/errors/table.ts, shown in
 * docs/errors.md): 0 all done · 1 something is left that a later run can finish · 2 the operator
 * must change something first · 3 a bug (an error without a code of ours).
 */
import { errorRow, EXIT, isGridsyncError } from '../errors/index.js';

export const EXIT_OK = EXIT.ok;
export const EXIT_INCOMPLETE = EXIT.incomplete;
export const EXIT_OPERATOR = EXIT.operator;
export const EXIT_INTERNAL = EXIT.internal;

/** A system error's code (ENOENT, EACCES, ENOSPC, …): a file or permission the operator fixes. */
const SYSTEM_CODE = /^E[A-Z0-9_]+$/;

function codeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

export function exitCodeFor(err: unknown): number {
  const code = codeOf(err);
  const row = code ? errorRow(code) : undefined;
  if (row) return row.exit ?? EXIT_INTERNAL;
  if (code && SYSTEM_CODE.test(code)) return EXIT_OPERATOR;
  return EXIT_INTERNAL;
}

/** One line for stderr: the message and the code, never a stack trace. */
export function describeForOperator(err: unknown): string {
  const code = codeOf(err);
  if (err instanceof Error) {
    if (code) return `${err.message} [${code}]`;
    return isGridsyncError(err) ? err.message : `internal error: ${err.message} [INTERNAL_ERROR] (a bug: please report it)`;
  }
  return String(err);
}
