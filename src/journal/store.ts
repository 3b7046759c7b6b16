/**
 * The journal's one interface, implemented by the embedded SQLite journal (`./db.ts`, the default)
 * and by PostgreSQL (`./postgres.ts`, shared by several instances). Glossary:
 *
 * - store: one open journal; reads answer from committed (SQLite: also from pending) state.
 * - commit: a write, grouped with the others waiting (group commit) in one database transaction;
 *   one that throws rolls back alone (the batch is run again, each in its own savepoint, so a
 *   commit's function may run twice: journal statements only); it resolves once durable.
 * - lease: which instance may write a mailbox's rows now, with a fencing token that grows on every
 *   takeover (`./lease.ts`). Every write of a mailbox's rows checks, inside its own transaction,
 *   that this instance still holds that mailbox's lease with its token; a stale token refuses the
 *   write (`JournalLeaseLostError`). SQLite's lease is trivial: the single-daemon lock holds it.
 *
 * SQL is written once, for both backends: `?` placeholders, `RETURNING`, `ON CONFLICT`; integers
 * come back as numbers from both.
 */
import { scrubHeld } from '../errors/index.js';
import { padded } from './id-lists.js';
import type { Lease, LeaseRow } from './lease.js';

export type Direction = 'in' | 'out' | 'daemon';

export interface EventInput {
  readonly direction: Direction;
  readonly mailboxId?: number | null;
  /** The item's key: the parcelId inbound, the outbound row id, or a daemon subject. */
  readonly item?: string | number | null;
  readonly from?: string | null;
  readonly to?: string | null;
  readonly detail?: Record<string, unknown> | null;
}

export interface CommitOptions {
  /**
   * The caller is one of many parallel workers and its next step can wait a few milliseconds: in
   * a burst the commit lingers (up to a few ms) so that others share its transaction and fsync.
   * Each transaction costs ~0.3 ms of CPU whatever it holds; the inbound pipeline's per-parcel
   * transitions use this, and halved the journal's share of a burst's CPU with it.
   */
  readonly linger?: boolean;
  /**
   * The commit reads and writes only its own item's rows (one parcel's), so it may run beside
   * other independent commits of the same batch: PostgreSQL then sends their statements together
   * and they share round trips. Rows two such commits both touch are still safe (a conflict makes
   * the batch run again one commit at a time); only their order is not guaranteed.
   */
  readonly independent?: boolean;
  /**
   * An operator's command (`gridsync requeue`, `gridsync redeliver`): a process that holds no lease,
   * beside the daemons that do. Its writes and events skip the lease check, so only the journal
   * modules' operator steps ask for this: each changes rows only in a final state (an `in_error`
   * file, a `confirmed` parcel: nothing a lease holder still drives on), by a statement that
   * re-checks that state (a row moved meanwhile is left alone), and records its events like any
   * transition.
   */
  readonly operator?: boolean;
}

/** What a commit's function may do inside its transaction. */
export interface JournalTx {
  get<T>(sql: string, ...params: unknown[]): Promise<T | undefined>;
  all<T>(sql: string, ...params: unknown[]): Promise<T[]>;
  /**
   * A write to rows of `mailboxId`: the lease is checked first (once per transaction and mailbox;
   * not in an operator's commit, `CommitOptions.operator`), a stale token throws
   * `JournalLeaseLostError` and nothing is written. Returns the rows a `RETURNING` clause gives,
   * and how many rows changed.
   */
  write<T = Record<string, unknown>>(mailboxId: number, sql: string, ...params: unknown[]): Promise<{ rows: T[]; changes: number }>;
  /** Append to the audit trail (fenced like `write` when the event names a mailbox). */
  recordEvent(event: EventInput): Promise<void>;
}

/** Leases of mailboxes, on the database's clock (`./lease.ts`). */
export interface Leases {
  /** This instance's name: the owner written into the leases it holds. */
  readonly owner: string;
  /**
   * Takes the mailbox's lease when it is free or expired (the token grows), or renews this
   * instance's own (the token stays unless it had expired). undefined: another instance holds it.
   */
  acquire(mailboxId: number, ttlMs: number): Promise<Lease | undefined>;
  /** Extends a held lease; undefined when it was taken over meanwhile (the lease is lost). */
  renew(lease: Lease, ttlMs: number): Promise<Lease | undefined>;
  /** Hands the lease back at once (SIGTERM): another instance may take it without waiting. */
  release(lease: Lease): Promise<void>;
  /** Every mailbox's lease as the database has it, with whether it is live on the server's clock. */
  list(): Promise<LeaseRow[]>;
  /**
   * Says this instance is alive for `ttlMs` (on the server's clock) and which mailboxes it serves:
   * the others count it in their fair share when it serves the same ones.
   */
  announce(ttlMs: number, mailboxIds: readonly number[]): Promise<void>;
  /** The names of the instances whose announcement is live. */
  instances(): Promise<string[]>;
  /**
   * The live instances that serve the same mailboxes (`servedMailboxes`), or announced none (an
   * older version, taken to serve the same): those the fair share is split among.
   */
  peers(mailboxIds: readonly number[]): Promise<string[]>;
  /** Withdraws the announcement (a planned stop). */
  retire(): Promise<void>;
  /** Called once each time this instance learns it lost a mailbox's lease (a refused write, a failed renewal). */
  onLost(listener: (mailboxId: number) => void): void;
  /** Called for every journal write (a commit) refused because this instance's token for the mailbox is stale or gone. */
  onWriteRefused(listener: (mailboxId: number) => void): void;
}

export interface JournalStore {
  readonly backend: 'sqlite' | 'postgres';
  /** Where it lives, safe to show (a URL's password masked). */
  readonly location: string;
  /** Milliseconds since the epoch, as written into rows (injectable for tests). */
  readonly now: () => number;
  readonly leases: Leases;
  get<T>(sql: string, ...params: unknown[]): Promise<T | undefined>;
  all<T>(sql: string, ...params: unknown[]): Promise<T[]>;
  /** Group commit (see the glossary above). */
  commit<T>(fn: (tx: JournalTx) => Promise<T>, options?: CommitOptions): Promise<T>;
  /** The shared journal only: a table or column found missing while in use; every commit is refused from then on. */
  onSchemaDamaged?(listener: (err: Error) => void): void;
  /**
   * Housekeeping across mailboxes that no lease guards: retention deletes of finished rows and
   * daemon metadata. Returns the number of rows changed.
   */
  maintain(sql: string, ...params: unknown[]): Promise<number>;
  getMeta(key: string): Promise<string | undefined>;
  setMeta(key: string, value: string): Promise<void>;
  /** Delete events older than `olderThanMs` (retention); rows are pruned by their own modules. */
  pruneEvents(olderThanMs: number): Promise<number>;
  /** The applied schema version. */
  schemaVersion(): Promise<number>;
  /** Commits still waiting are written first. Safe to call twice. */
  close(): Promise<void>;
}

/** The event trail's insert, shared by both backends. */
export const INSERT_EVENT_SQL =
  'INSERT INTO events (at, direction, mailbox_id, item, from_state, to_state, detail) VALUES (?, ?, ?, ?, ?, ?, ?)';

export function eventParams(at: number, event: EventInput): unknown[] {
  return [
    at,
    event.direction,
    event.mailboxId ?? null,
    event.item === undefined || event.item === null ? null : String(event.item),
    event.from ?? null,
    event.to ?? null,
    // Reasons may quote what the service said, secrets included.
    event.detail ? scrubHeld(JSON.stringify(event.detail)) : null,
  ];
}

/** Daemon metadata (the last run's leftovers) may quote the service too. */
export function metaParams(key: string, value: string): [string, string] {
  return [key, scrubHeld(value)];
}

export const GET_META_SQL = 'SELECT value FROM meta WHERE key = ?';
export const SET_META_SQL = 'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value';
/** The tables retention deletes from, and the key of their rows in both backends. */
const PRUNED_KEYS = { inbound_parcels: 'mailbox_id, parcel_id', outbound_files: 'id', events: 'id' } as const;
type PrunedTable = keyof typeof PRUNED_KEYS;

/** Rows one retention statement deletes at most. */
export const PRUNE_BATCH = 5_000;

/**
 * Retention: deletes the rows of `table` that match `where` (its `?` bound to `params`) through
 * the store's `maintain`, at most PRUNE_BATCH per statement, until a batch comes back short,
 * letting the event loop run between batches; returns how many. One DELETE of a backlog — a year
 * of events after `journalDays` was lowered — held SQLite's event loop for seconds and grew its
 * WAL by the whole backlog, and on PostgreSQL ran into the statement timeout every day, deleting
 * nothing. Built on `maintain` alone, so both backends prune the same way.
 */
export async function pruneRows(
  store: Pick<JournalStore, 'maintain'>,
  table: PrunedTable,
  where: string,
  ...params: unknown[]
): Promise<number> {
  const key = PRUNED_KEYS[table];
  const sql = `DELETE FROM ${table} WHERE (${key}) IN (SELECT ${key} FROM ${table} WHERE ${where} LIMIT ${PRUNE_BATCH})`;
  let total = 0;
  for (;;) {
    const n = await store.maintain(sql, ...params);
    total += n;
    if (n < PRUNE_BATCH) return total;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Rows `pruneJudged` reads, judges and deletes at a time (each deleted by key: bound parameters). */
const JUDGED_PAGE = 500;

/**
 * Retention of rows that may still protect something outside the journal (a parcel still pending
 * on the service, a file still in errorDir), so age alone does not let them go: the rows of
 * `table` matching `where` are read a page at a time in `key` order, `gone` judges each, and the
 * ones it lets go are deleted by key with `where` checked again in the same statement — a row that
 * changed while it was judged stays. `key` identifies a row within `where` (`parcel_id` only with
 * a mailbox in `where`). Returns how many were deleted. Built on `all` and `maintain`, so both
 * backends prune the same way.
 */
export async function pruneJudged<R extends Record<string, unknown>>(
  store: Pick<JournalStore, 'all' | 'maintain'>,
  table: PrunedTable,
  key: 'parcel_id' | 'id',
  where: string,
  params: readonly unknown[],
  gone: (row: R) => boolean | Promise<boolean>,
): Promise<number> {
  let total = 0;
  let after = Number.MIN_SAFE_INTEGER;
  for (;;) {
    const page = await store.all<R>(
      `SELECT * FROM ${table} WHERE (${where}) AND ${key} > ? ORDER BY ${key} LIMIT ${JUDGED_PAGE}`,
      ...params,
      after,
    );
    const doomed: unknown[] = [];
    for (const row of page) if (await gone(row)) doomed.push(row[key]);
    if (doomed.length > 0) {
      // Padded (./id-lists.ts): a DELETE text per batch size was a prepared statement each on PostgreSQL.
      const { marks, values } = padded(doomed);
      total += await store.maintain(`DELETE FROM ${table} WHERE (${where}) AND ${key} IN (${marks})`, ...params, ...values);
    }
    const last = page[page.length - 1];
    if (page.length < JUDGED_PAGE || !last) return total;
    after = Number(last[key]);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Events older than a moment (`?`): what retention deletes from the trail. */
export const EVENTS_BEFORE = 'at < ?';
