/**
 * The emulator's state: a SQLite database (a file when `dataFile` is given, so state survives
 * restarts; in memory otherwise) plus a content directory holding each parcel's bytes as a file,
 * so that a parcel of hundreds of MB never sits in memory.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EmulatorConfigError } from './config-error.js';

export type Db = Database.Database;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS networks (
  network_id INTEGER PRIMARY KEY, unique_id TEXT NOT NULL, company_name TEXT NOT NULL,
  status TEXT NOT NULL, created TEXT NOT NULL, modified TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS mailboxes (
  mailbox_id INTEGER PRIMARY KEY, network_id INTEGER NOT NULL, unique_id TEXT NOT NULL,
  company_name TEXT NOT NULL, status TEXT NOT NULL, auto_ack INTEGER NOT NULL DEFAULT 0,
  created TEXT NOT NULL, modified TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS grid_ids (
  grid_id INTEGER PRIMARY KEY, mailbox_id INTEGER NOT NULL, network_id INTEGER NOT NULL,
  qualifier TEXT NOT NULL, id TEXT NOT NULL, description TEXT, status TEXT NOT NULL,
  routing_group TEXT NOT NULL, edi_standard TEXT NOT NULL, UNIQUE (qualifier, id));
CREATE TABLE IF NOT EXISTS interconnects (
  interconnect_id INTEGER PRIMARY KEY, grid_id_from INTEGER NOT NULL, grid_id_to INTEGER NOT NULL,
  status TEXT NOT NULL, created TEXT NOT NULL, modified TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS users (
  user_id INTEGER PRIMARY KEY, login TEXT NOT NULL, email TEXT, first_name TEXT, last_name TEXT,
  password TEXT, auth_level TEXT NOT NULL, network_id INTEGER NOT NULL, mailbox_id INTEGER NOT NULL,
  api_key TEXT UNIQUE, status TEXT NOT NULL, created TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tokens (
  token TEXT PRIMARY KEY, refresh_token TEXT UNIQUE, user_id INTEGER NOT NULL,
  expires_at INTEGER NOT NULL, alive INTEGER NOT NULL DEFAULT 1);
CREATE TABLE IF NOT EXISTS parcels (
  parcel_id INTEGER PRIMARY KEY, mailbox_id INTEGER NOT NULL, network_id INTEGER NOT NULL,
  direction TEXT NOT NULL CHECK (direction IN ('in', 'out')), status TEXT NOT NULL,
  file_name TEXT NOT NULL, bytes INTEGER NOT NULL, sha256 TEXT NOT NULL,
  grid_id_from INTEGER, grid_id_to INTEGER, created TEXT NOT NULL, created_ms INTEGER NOT NULL,
  modified TEXT NOT NULL, mailbag_control_id TEXT, content TEXT NOT NULL,
  peer_parcel_id INTEGER, hidden_until INTEGER);
CREATE INDEX IF NOT EXISTS parcels_by_mailbox ON parcels (mailbox_id, direction, status);
CREATE TABLE IF NOT EXISTS interchanges (
  interchange_id INTEGER PRIMARY KEY, parcel_id INTEGER NOT NULL, mailbox_id INTEGER NOT NULL,
  direction TEXT NOT NULL, sender TEXT NOT NULL, receiver TEXT NOT NULL, standard TEXT NOT NULL,
  document_type TEXT, control_number TEXT NOT NULL, header TEXT NOT NULL, status TEXT NOT NULL,
  created TEXT NOT NULL, created_ms INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS interchanges_by_parcel ON interchanges (parcel_id);
CREATE TABLE IF NOT EXISTS callbacks (
  callback_id INTEGER PRIMARY KEY, url TEXT NOT NULL, event TEXT NOT NULL, mailbox_id INTEGER,
  network_id INTEGER, http_auth_type TEXT NOT NULL, username TEXT, password TEXT, status TEXT NOT NULL,
  owner_network_id INTEGER NOT NULL, created TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS callback_events (
  callback_event_id INTEGER PRIMARY KEY, callback_id INTEGER NOT NULL, event TEXT NOT NULL,
  mailbox_id INTEGER, object_id INTEGER NOT NULL, status TEXT NOT NULL, created TEXT NOT NULL,
  created_ms INTEGER NOT NULL, delivered TEXT, http_status INTEGER, payload TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0, last_attempt TEXT);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS settings (
  scope TEXT NOT NULL, scope_id INTEGER NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
  PRIMARY KEY (scope, scope_id, key));
CREATE TABLE IF NOT EXISTS comms (
  comm_id INTEGER PRIMARY KEY, mailbox_id INTEGER NOT NULL, comm_type TEXT NOT NULL, identifier TEXT NOT NULL,
  status TEXT NOT NULL, use_type TEXT NOT NULL, private_key_required INTEGER NOT NULL, created TEXT NOT NULL,
  UNIQUE (comm_type, identifier));
CREATE TABLE IF NOT EXISTS comm_pairs (
  grid_id_from INTEGER NOT NULL, grid_id_to INTEGER NOT NULL, comm_id INTEGER NOT NULL,
  PRIMARY KEY (grid_id_from, grid_id_to));
CREATE TABLE IF NOT EXISTS certificates (
  cert_key_id INTEGER PRIMARY KEY, comm_id INTEGER NOT NULL, kind TEXT NOT NULL, cert_type TEXT NOT NULL,
  usage TEXT NOT NULL, begin_usage TEXT NOT NULL, expires TEXT, sha256 TEXT, status TEXT NOT NULL, created TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS carbon_copies (
  cc_id INTEGER PRIMARY KEY, from_mailbox_id INTEGER NOT NULL, to_mailbox_id INTEGER NOT NULL,
  status TEXT NOT NULL, direction TEXT NOT NULL, created TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS partner_notes (
  note_id INTEGER PRIMARY KEY, interconnect_id INTEGER NOT NULL, text TEXT NOT NULL, user_id INTEGER NOT NULL, created TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS api_keys (
  key_id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL, key TEXT NOT NULL UNIQUE, visibility TEXT NOT NULL,
  created TEXT NOT NULL, expires_at INTEGER, revoked INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS portals (
  portal_id INTEGER PRIMARY KEY, mailbox_id INTEGER NOT NULL UNIQUE, url TEXT NOT NULL, status TEXT NOT NULL, created TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sms (
  sms_id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL, message TEXT NOT NULL, created TEXT NOT NULL);
`;

/** Rows of the tables as both fronts (REST and SOAP) read them. */
export interface NetworkRow {
  network_id: number;
  unique_id: string;
  company_name: string;
  status: string;
  created: string;
  modified: string;
}
export interface MailboxRow extends NetworkRow {
  mailbox_id: number;
  auto_ack: number;
}
export interface InterconnectRow {
  interconnect_id: number;
  grid_id_from: number;
  grid_id_to: number;
  status: string;
  created: string;
  modified: string;
}
export interface InterchangeRow {
  interchange_id: number;
  parcel_id: number;
  mailbox_id: number;
  direction: string;
  sender: string;
  receiver: string;
  standard: string;
  document_type: string | null;
  control_number: string;
  header: string;
  status: string;
  created: string;
}

export interface ParcelRow {
  parcel_id: number;
  mailbox_id: number;
  network_id: number;
  direction: 'in' | 'out';
  status: string;
  file_name: string;
  bytes: number;
  sha256: string;
  grid_id_from: number | null;
  grid_id_to: number | null;
  created: string;
  created_ms: number;
  modified: string;
  mailbag_control_id: string | null;
  content: string;
  peer_parcel_id: number | null;
  hidden_until: number | null;
}

export interface UserRow {
  user_id: number;
  login: string;
  email: string | null;
  first_name: string | null;
  last_name: string | null;
  password: string | null;
  auth_level: string;
  network_id: number;
  mailbox_id: number;
  api_key: string | null;
  status: string;
  created: string;
}

export interface GridIdRow {
  grid_id: number;
  mailbox_id: number;
  network_id: number;
  qualifier: string;
  id: string;
  description: string | null;
  status: string;
  routing_group: string;
  edi_standard: string;
}

/**
 * The data file, opened with the pragmas of a durable store. One that cannot serve (a directory, a
 * file that is not SQLite, a folder that cannot be written) is the operator's to fix: it came out
 * as a bug (exit 3) in SQLite's words, without the path.
 */
function openDataFile(file: string): Db {
  let db: Db | undefined;
  try {
    fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    return db;
  } catch (err) {
    db?.close();
    const code = (err as { code?: unknown }).code;
    const why =
      code === 'SQLITE_NOTADB'
        ? 'is not an SQLite database (another file at that path?)'
        : code === 'SQLITE_CANTOPEN'
          ? 'cannot be opened (a directory, or in a folder that cannot be written?)'
          : `cannot be used: ${(err as Error).message}`;
    throw new EmulatorConfigError(`data file ${file} ${why}`, { cause: err });
  }
}

export class EmulatorStore {
  readonly db: Db;
  /** Directory of parcel content files. */
  readonly contentDir: string;
  private readonly ownsContentDir: boolean;

  constructor(dataFile: string | undefined) {
    if (dataFile) {
      this.db = openDataFile(dataFile);
      this.contentDir = `${dataFile}.content`;
      this.ownsContentDir = false;
    } else {
      this.db = new Database(':memory:');
      this.contentDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-emulator-'));
      this.ownsContentDir = true;
    }
    this.db.pragma('busy_timeout = 5000');
    cacheStatements(this.db);
    fs.mkdirSync(this.contentDir, { recursive: true });
    this.db.exec(SCHEMA);
  }

  get isEmpty(): boolean {
    return (this.db.prepare('SELECT count(*) AS n FROM networks').get() as { n: number }).n === 0;
  }

  /** Next id of a sequence, kept in meta so that ids never repeat across restarts. */
  nextId(sequence: string, start: number): number {
    const row = this.db.prepare('SELECT value FROM meta WHERE key = ?').get(`seq.${sequence}`) as { value: string } | undefined;
    const next = row ? Number(row.value) + 1 : start;
    this.db
      .prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value')
      .run(`seq.${sequence}`, String(next));
    return next;
  }

  contentPath(name: string): string {
    return path.join(this.contentDir, name);
  }

  parcel(parcelId: number): ParcelRow | undefined {
    return this.db.prepare('SELECT * FROM parcels WHERE parcel_id = ?').get(parcelId) as ParcelRow | undefined;
  }

  user(userId: number): UserRow | undefined {
    return this.db.prepare('SELECT * FROM users WHERE user_id = ?').get(userId) as UserRow | undefined;
  }

  gridId(gridId: number): GridIdRow | undefined {
    return this.db.prepare('SELECT * FROM grid_ids WHERE grid_id = ?').get(gridId) as GridIdRow | undefined;
  }

  /** By ISA qualifier and id, or by a VAN ID added to a grid ID. */
  gridIdByName(qualifier: string, id: string): GridIdRow | undefined {
    const direct = this.db.prepare('SELECT * FROM grid_ids WHERE qualifier = ? AND id = ?').get(qualifier, id) as GridIdRow | undefined;
    if (direct) return direct;
    const alias = this.setting<number>('van', 0, `${qualifier}/${id}`);
    return alias === undefined ? undefined : this.gridId(alias);
  }

  addVanAlias(qualifier: string, id: string, gridId: number): void {
    this.setSetting('van', 0, `${qualifier}/${id}`, gridId);
  }

  vanAliases(gridId: number): { vanQualifier: string; vanId: string }[] {
    const rows = this.db
      .prepare("SELECT key FROM settings WHERE scope = 'van' AND scope_id = 0 AND value = ? ORDER BY key")
      .all(JSON.stringify(gridId)) as { key: string }[];
    return rows.map((r) => {
      const slash = r.key.indexOf('/');
      return { vanQualifier: r.key.slice(0, slash), vanId: r.key.slice(slash + 1) };
    });
  }

  activeInterconnect(a: number, b: number): boolean {
    return (
      this.db
        .prepare(
          "SELECT 1 FROM interconnects WHERE status = 'Active' AND ((grid_id_from = ? AND grid_id_to = ?) OR (grid_id_from = ? AND grid_id_to = ?))",
        )
        .get(a, b, b, a) !== undefined
    );
  }

  /** A stored setting of a network, mailbox, grid ID, comm or user (profile fields, config, delimiters). */
  setting<T>(scope: string, scopeId: number, key: string): T | undefined {
    const row = this.db.prepare('SELECT value FROM settings WHERE scope = ? AND scope_id = ? AND key = ?').get(scope, scopeId, key) as
      { value: string } | undefined;
    return row ? (JSON.parse(row.value) as T) : undefined;
  }

  settings(scope: string, scopeId: number): Record<string, unknown> {
    const rows = this.db.prepare('SELECT key, value FROM settings WHERE scope = ? AND scope_id = ? ORDER BY key').all(scope, scopeId) as {
      key: string;
      value: string;
    }[];
    return Object.fromEntries(rows.map((r) => [r.key, JSON.parse(r.value) as unknown]));
  }

  setSetting(scope: string, scopeId: number, key: string, value: unknown): void {
    this.db
      .prepare(
        'INSERT INTO settings (scope, scope_id, key, value) VALUES (?, ?, ?, ?) ON CONFLICT (scope, scope_id, key) DO UPDATE SET value = excluded.value',
      )
      .run(scope, scopeId, key, JSON.stringify(value));
  }

  close(): void {
    if (!this.db.open) return;
    this.db.close();
    if (this.ownsContentDir) fs.rmSync(this.contentDir, { recursive: true, force: true });
  }
}

/**
 * Makes `db.prepare` return one statement per SQL text: handlers prepare their statements on every
 * request, and preparing was the largest share of the emulator's SQLite work per request. Safe
 * because no handler changes a statement's mode (pluck, raw, expand) or iterates one across an
 * await. Bounded: SQL built from optional filters has a few shapes; a flood of others starts over.
 */
function cacheStatements(db: Db): void {
  const prepare = db.prepare.bind(db);
  const cache = new Map<string, Database.Statement>();
  db.prepare = ((sql: string) => {
    let st = cache.get(sql);
    if (!st) {
      if (cache.size >= 1000) cache.clear();
      st = prepare(sql);
      cache.set(sql, st);
    }
    return st;
  }) as Db['prepare'];
}
