import { GridsyncError } from './gridsync-error.js';

/** Something gridsync itself guarantees did not hold: a bug, not an operator's mistake (exit 3, "report it"). */
export class InternalError extends GridsyncError {
  readonly code = 'INTERNAL_ERROR';
}
