/**
 * An outbox file no rename of gridsync's user moves: EPERM at its claim's rename into processing/
 * (an immutable or append-only file, another user's file in a sticky outbox). Unlike the folders'
 * EACCES, it is this file's alone, and no retry cures it: it is reported, and left alone until it
 * changes. When the move into errorDir meets EPERM too, the file stays in the outbox and its
 * report says so (`Disposal.toError`).
 */
import { GridsyncError } from '../errors/index.js';

export class OutboxFileUnmovableError extends GridsyncError {
  readonly code = 'OUTBOUND_FILE_UNMOVABLE';

  constructor(cause: unknown) {
    super(`cannot be moved out of the outbox into processing/ to be sent: ${(cause as Error).message}`, { cause });
  }
}
