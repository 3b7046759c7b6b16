import { GridsyncError } from '../errors/index.js';

/**
 * The shared (PostgreSQL) journal lacks a table or column that its recorded schema version — or
 * the other objects of a version not recorded — says it has: dropped by hand, or a partial
 * restore. Nothing is created in its place (an empty table would pass for a journal that knows
 * nothing, and parcels it knew would be delivered again). `missing` names each object
 * (`table` or `table.column`).
 */
export class JournalSchemaDamagedError extends GridsyncError {
  readonly code = 'JOURNAL_SCHEMA_DAMAGED';
  constructor(
    readonly location: string,
    readonly missing: readonly string[],
  ) {
    super(
      `journal ${location} is damaged: ${missing.map((m) => (m.includes('.') ? `column ${m}` : `table ${m}`)).join(', ')} missing — restore ${missing.length > 1 ? 'them' : 'it'} from a backup of the database (see "When the shared journal is damaged" in the operations guide); nothing was changed`,
    );
  }
}
