/**
 * What a log line carries about an error: its code and its context fields (endpoint, httpStatus,
 * errorCode, parcelId, path, …), so that logs can be searched and alerted on by field instead of
 * by parsing a sentence. Stack traces are left out: they mean nothing to an operator.
 */
import { GridsyncError } from '@gridsync/protocol/errors';

type Scalar = string | number | boolean | null;

const SKIPPED = new Set(['name', 'message', 'stack', 'cause']);

/** The message is `err`, as in every log line gridsync writes about an error. */
export function errorFields(err: unknown): Record<string, Scalar> {
  if (!(err instanceof Error)) return { err: String(err) };
  const fields: Record<string, Scalar> = { err: err.message };
  if (err instanceof GridsyncError) fields.code = err.code;
  for (const [key, value] of Object.entries(err)) {
    if (SKIPPED.has(key)) continue;
    if (value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') fields[key] = value;
  }
  // Node's system errors: code (ENOENT…), syscall and path are own properties, picked up above.
  return fields;
}

/** The stable code of a failure: ours (docs/errors.md), else the system's (ENOSPC, SQLITE_FULL), else INTERNAL_ERROR. */
export function codeOf(err: unknown): string {
  const code = (err as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' && code !== '' ? code : 'INTERNAL_ERROR';
}
