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

/**
 * Migration 2, the same SQL on both backends: whether a confirm of ours has yet to be seen to take.
 * Set when the service answered a confirm, cleared once the parcel is seen to leave `InBoxReady`.
 * A restart must not forget it: listed ready again, such a parcel is confirmed again, never placed
 * again (src/inbound/confirmations.ts). Rows from before it count as seen (0).
 */
export const INBOUND_CONFIRM_UNVERIFIED = `
ALTER TABLE inbound_parcels ADD COLUMN confirm_unverified INTEGER NOT NULL DEFAULT 0;
CREATE INDEX inbound_unverified_confirms ON inbound_parcels (mailbox_id, parcel_id) WHERE confirm_unverified = 1;
`;
