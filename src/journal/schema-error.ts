import { GridsyncError } from '../errors/index.js';

/**
 * The journal was written by a newer gridsync (its schema version is beyond the migrations this
 * build knows): it is left untouched rather than misread. Run the newer version, or migrate back.
 */
export class JournalSchemaTooNewError extends GridsyncError {
  readonly code = 'JOURNAL_SCHEMA_TOO_NEW';
  constructor(
    readonly location: string,
    readonly found: number,
    readonly known: number,
  ) {
    super(`journal ${location} has schema version ${found}; this gridsync knows up to ${known} — run the newer gridsync that wrote it`);
  }
}
