/** Why the daemon could not start, with a code that says whether a later attempt can succeed (docs/errors.md). */
import path from 'node:path';
import { GridsyncError } from '../errors/index.js';

export type StartupCode =
  | 'STARTUP_JOURNAL'
  | 'STARTUP_SERVICE_CHANGED'
  | 'STARTUP_CONFIG'
  | 'STARTUP_FOLDERS'
  | 'STARTUP_CREDENTIALS_REJECTED'
  | 'STARTUP_MAILBOX_UNREACHABLE'
  | 'STARTUP_UNREACHABLE'
  | 'STARTUP_STOPPED'
  | 'STARTUP_NO_MAILBOX';

/** Start-up failed; the code says whether a later attempt can succeed (docs/errors.md). */
export class StartupError extends GridsyncError {
  constructor(
    readonly code: StartupCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The journal could not be opened: the path, what it means and what to do. */
export function journalAdvice(file: string, err: unknown): string {
  const code = (err as { code?: string }).code ?? '';
  const msg = (err as Error).message;
  const uid = process.geteuid?.() ?? '?';
  if (/NOTADB|CORRUPT/.test(code) || /not a database|malformed/.test(msg)) {
    return `journal ${file} is damaged (${msg}): stop gridsync, move the file aside with its WAL and shared-memory files (mkdir ${path.join(path.dirname(file), 'damaged')} && mv ${file}* ${path.join(path.dirname(file), 'damaged')}/), then restore the last backup or start with an empty journal — see "When the journal is damaged" in docs/operations.md`;
  }
  if (/CANTOPEN|READONLY|PERM|AUTH/.test(code) || /unable to open|readonly|read-only/.test(msg)) {
    return `journal ${file} cannot be opened for writing (${msg}): stateDir ${path.dirname(file)} must exist and be writable by the user gridsync runs as (uid ${uid}), on a local read-write filesystem`;
  }
  return `journal ${file}: ${msg}`;
}
