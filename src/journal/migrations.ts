/**
 * Versioned schema migrations, applied in order inside one transaction each; the applied version
 * is SQLite's `user_version`. PostgreSQL's list (`./postgres-migrations.ts`) keeps the same numbers
 * for the same logical schema. Add a new entry for every change once a version has shipped — never
 * edit a shipped one.
 */
import { INBOUND_CONFIRM_UNVERIFIED, INBOUND_SCHEMA } from './schema-inbound.js';
import { OUTBOUND_ATTEMPT_SERVICE_AT, OUTBOUND_SCHEMA } from './schema-outbound.js';

export interface Migration {
  readonly version: number;
  readonly description: string;
  readonly sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'inbound parcels, outbound files, event trail, daemon metadata',
    sql: `
      ${INBOUND_SCHEMA}
      ${OUTBOUND_SCHEMA}
      CREATE TABLE events (
        id         INTEGER PRIMARY KEY AUTOINCREMENT,
        at         INTEGER NOT NULL,
        direction  TEXT    NOT NULL,
        mailbox_id INTEGER,
        item       TEXT,
        from_state TEXT,
        to_state   TEXT,
        detail     TEXT
      );
      CREATE INDEX events_by_at ON events (at);
      CREATE INDEX events_by_item ON events (direction, item);
      CREATE TABLE meta (
        key   TEXT PRIMARY KEY,
        value TEXT NOT NULL
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 2,
    description: 'inbound: confirms not yet seen to take survive a restart',
    sql: INBOUND_CONFIRM_UNVERIFIED,
  },
  {
    version: 3,
    description: "outbound: an upload attempt's start in the service's time",
    sql: OUTBOUND_ATTEMPT_SERVICE_AT,
  },
];
