/**
 * Outbound table: one row per file claimed from an outbox folder. States: ./outbound.ts.
 * Part of migration 1 (src/journal/migrations.ts); until the first release this SQL may change in place.
 */
export const OUTBOUND_SCHEMA = `
CREATE TABLE outbound_files (
  id                 INTEGER PRIMARY KEY AUTOINCREMENT,
  mailbox_id         INTEGER NOT NULL,
  outbox_dir         TEXT    NOT NULL,
  file_name          TEXT    NOT NULL,
  source_path        TEXT    NOT NULL,
  processing_path    TEXT,
  state              TEXT    NOT NULL,
  bytes              INTEGER,
  sha256             TEXT,
  attempts           INTEGER NOT NULL DEFAULT 0,
  attempt_started_at INTEGER,
  parcel_id          INTEGER,
  final_path         TEXT,
  error_code         TEXT,
  http_status        INTEGER,
  last_error         TEXT,
  created_at         INTEGER NOT NULL,
  updated_at         INTEGER NOT NULL
);
CREATE INDEX outbound_by_state ON outbound_files (state, updated_at);
CREATE INDEX outbound_by_sha256 ON outbound_files (sha256, updated_at);
`;

/**
 * Migration 3: the start of an upload attempt in the service's time, as its clock stood then
 * (null when no answer had shown it yet). The reconciliation of an unknown upload searches from
 * there: from our clock's reading plus the service's offset seen later, a clock of ours stepped
 * back in between (corrected after a boot) put the search past the parcel, and the file was sent
 * again. Rows from before it have none and are searched as before.
 */
export const OUTBOUND_ATTEMPT_SERVICE_AT = `
ALTER TABLE outbound_files ADD COLUMN attempt_service_at BIGINT;
`;
