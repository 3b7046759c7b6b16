import { GridsyncError } from '../errors/index.js';

/**
 * The journal's database cannot be reached or broke off (refused, timed out, the server restarted
 * or ended our connection): the write was not made — or, when its commit's answer was lost, its
 * outcome is unknown. The message never holds the database password.
 */
export class JournalUnavailableError extends GridsyncError {
  readonly code = 'JOURNAL_UNAVAILABLE';
  constructor(
    readonly location: string,
    reason: string,
    /** The database's own error code (SQLSTATE, or a socket error code), when it gave one. */
    readonly dbCode?: string,
  ) {
    super(`journal ${location} unavailable: ${reason}`);
  }
}
