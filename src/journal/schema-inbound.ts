/**
 * Inbound table: one row per (mailboxId, parcelId). States and their meaning: ./inbound.ts.
 * Part of migration 1 (src/journal/migrations.ts); until the first release this SQL may change in place.
 */
export const INBOUND_SCHEMA = `
CREATE TABLE inbound_parcels (
  mailbox_id     INTEGER NOT NULL,
  parcel_id      INTEGER NOT NULL,
  state          TEXT    NOT NULL,
  delivery       INTEGER NOT NULL DEFAULT 1,
  file_name      TEXT,
  declared_bytes INTEGER,
  grid_id_from   INTEGER,
  grid_id_to     INTEGER,
  service_created TEXT,
  staging_path   TEXT,
  final_path     TEXT,
  bytes          INTEGER,
  sha256         TEXT,
  attempts       INTEGER NOT NULL DEFAULT 0,
  last_error     TEXT,
  first_seen_at  INTEGER NOT NULL,
  updated_at     INTEGER NOT NULL,
  PRIMARY KEY (mailbox_id, parcel_id)
) WITHOUT ROWID;
CREATE INDEX inbound_by_state ON inbound_parcels (state, updated_at);
`;
