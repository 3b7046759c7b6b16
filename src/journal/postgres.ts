/**
 * The PostgreSQL journal: one database shared by every instance that serves the same mailboxes.
 *
 * Group commit as in SQLite: commits asked for while a batch is in flight wait and go together in
 * the next transaction, each in its own savepoint. Every write of a mailbox's rows first runs, in
 * that transaction, `SELECT … FROM lease … FOR SHARE` with this instance's token (once per
 * transaction and mailbox): no row means another instance took the lease over, and the write is
 * refused with `JournalLeaseLostError`. The lock taken FOR SHARE makes a takeover wait until the
 * transaction ends, so no write under an old token can commit after the token changed.
 *
 * Lease expiry is computed on the server's clock (`clock_timestamp()`), never on ours.
 *
 * Connections (`pg` traps): TCP keepalive on (a dead peer would otherwise hang a query until the
 * OS notices); statement, lock and idle-in-transaction timeouts are startup options, so a frozen
 * holder inside a transaction (a stopped process) is cut off by the server and cannot block a
 * takeover for longer than IDLE_IN_TX_MS. A connection the server killed is dropped from the pool
 * and the next batch opens a new one. The URL's password never appears in an error or a log: it
 * is scrubbed from every message this module raises, and `location` shows the URL redacted.
 */
import pg from 'pg';
import { scrubSecrets } from '../errors/index.js';
import { JournalLeaseLostError, type Lease, type LeaseRow } from './lease.js';
import type { Migration } from './migrations.js';
import { PG_MIGRATIONS } from './postgres-migrations.js';
import { JournalSchemaTooNewError } from './schema-error.js';
import {
  eventParams,
  GET_META_SQL,
  INSERT_EVENT_SQL,
  metaParams,
  PRUNE_EVENTS_SQL,
  SET_META_SQL,
  type EventInput,
  type JournalStore,
  type JournalTx,
  type Leases,
} from './store.js';
import { JournalUnavailableError } from './unavailable-error.js';

/** Server-side limits every connection starts with (ms). */
export const PG_TIMEOUTS = { statementMs: 10_000, lockMs: 3_000, idleInTxMs: 2_000, connectMs: 5_000, queryMs: 15_000 } as const;
const POOL_SIZE = 4;

const FENCE_SQL = 'SELECT 1 AS held FROM lease WHERE mailbox_id = ? AND owner = ? AND token = ? FOR SHARE';
/**
 * Take a free or expired lease (token + 1), or renew our own unexpired one with the token we hold
 * (token kept). A process that restarts under the same name never inherits its old token.
 */
const ACQUIRE_SQL = `
  INSERT INTO lease AS l (mailbox_id, owner, token, expires_at)
  VALUES (?, ?, 1, clock_timestamp() + ?::bigint * interval '1 millisecond')
  ON CONFLICT (mailbox_id) DO UPDATE SET
    token = CASE WHEN l.owner = excluded.owner AND l.token = ?::bigint AND l.expires_at >= clock_timestamp() THEN l.token ELSE l.token + 1 END,
    owner = excluded.owner,
    expires_at = excluded.expires_at
  WHERE (l.owner = excluded.owner AND l.token = ?::bigint) OR l.expires_at < clock_timestamp()
  RETURNING mailbox_id, owner, token, expires_at`;
/** Extend our lease; a token taken over meanwhile matches nothing. */
const RENEW_SQL = `
  UPDATE lease SET expires_at = clock_timestamp() + ?::bigint * interval '1 millisecond'
  WHERE mailbox_id = ? AND owner = ? AND token = ?
  RETURNING mailbox_id, owner, token, expires_at`;
/** Hand back: expired now, so the next acquire by anyone takes it (with a new token). */
const RELEASE_SQL = 'UPDATE lease SET expires_at = clock_timestamp() WHERE mailbox_id = ? AND owner = ? AND token = ?';
const LIST_SQL =
  'SELECT mailbox_id, owner, token, expires_at, expires_at > clock_timestamp() AS live, (extract(epoch FROM expires_at - clock_timestamp()) * 1000)::float8 AS remaining_ms FROM lease ORDER BY mailbox_id';
/**
 * Instance announcements for the fair share, as `meta` rows `instance:<name>` holding the expiry in
 * ms since the epoch on the server's clock. Announcements of instances gone for a day are removed.
 */
const ANNOUNCE_SQL = `
  WITH gone AS (DELETE FROM meta WHERE key LIKE 'instance:%' AND value::bigint < (extract(epoch FROM clock_timestamp()) * 1000)::bigint - 86400000)
  INSERT INTO meta (key, value) VALUES (?, ((extract(epoch FROM clock_timestamp()) * 1000)::bigint + ?::bigint)::text)
  ON CONFLICT (key) DO UPDATE SET value = excluded.value`;
const INSTANCES_SQL =
  "SELECT substr(key, 10) AS name FROM meta WHERE key LIKE 'instance:%' AND value::bigint > (extract(epoch FROM clock_timestamp()) * 1000)::bigint ORDER BY key";
const RETIRE_SQL = 'DELETE FROM meta WHERE key = ?';
const INSTANCE_KEY = (name: string): string => `instance:${name}`;

/** `?` placeholders (the SQL both backends share) as PostgreSQL's `$n`; none of ours sits in a literal. */
const numbered = new Map<string, string>();
export function toPgPlaceholders(sql: string): string {
  let out = numbered.get(sql);
  if (out === undefined) {
    let n = 0;
    out = sql.replace(/\?/g, () => `$${++n}`);
    numbered.set(sql, out);
  }
  return out;
}

/** bigint (int8) columns as numbers: every id and millisecond timestamp we keep is below 2^53. */
const types = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === pg.types.builtins.INT8
      ? (v: string) => Number(v)
      : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

export interface PgJournalOptions {
  /** This instance's name: the owner of its leases. */
  readonly owner: string;
  /** Milliseconds since the epoch, as written into rows; injectable for tests. */
  readonly now?: () => number;
  /** Apply migrations (default true); `status` and `doctor` only read. */
  readonly migrate?: boolean;
}

interface Pending {
  readonly fn: (tx: JournalTx) => Promise<unknown>;
  readonly resolve: (v: unknown) => void;
  readonly reject: (e: unknown) => void;
}

type LeaseDbRow = { mailbox_id: number; owner: string; token: number; expires_at: Date };
const toLease = (r: LeaseDbRow): Lease => ({ mailboxId: r.mailbox_id, owner: r.owner, token: r.token, expiresAt: r.expires_at });

/** The URL's password, in the forms it may be echoed (for scrubbing). */
function urlSecrets(url: string): string[] {
  try {
    const password = new URL(url).password;
    return password ? [password, decodeURIComponent(password)] : [];
  } catch {
    const m = /\/\/[^/@\s:]*:([^/@\s]*)@/.exec(url);
    return m?.[1] ? [m[1]] : [];
  }
}

export class PgJournal implements JournalStore {
  readonly backend = 'postgres';
  readonly leases: Leases;
  readonly now: () => number;
  private readonly owner: string;
  /** Tokens of the leases this instance holds, by mailbox: what every write is fenced with. */
  private readonly held = new Map<number, number>();
  private readonly lostListeners: ((mailboxId: number) => void)[] = [];
  private pending: Pending[] = [];
  private flushing = false;
  private flushScheduled = false;
  private closed = false;
  private idle: Promise<void> = Promise.resolve();
  private markIdle: () => void = () => undefined;

  private constructor(
    private readonly pool: pg.Pool,
    readonly location: string,
    private readonly secrets: readonly string[],
    options: PgJournalOptions,
  ) {
    this.owner = options.owner;
    this.now = options.now ?? Date.now;
    this.leases = {
      owner: this.owner,
      acquire: (mailboxId, ttlMs) => this.acquire(mailboxId, ttlMs),
      renew: (lease, ttlMs) => this.renew(lease, ttlMs),
      release: (lease) => this.release(lease),
      list: () => this.listLeases(),
      announce: async (ttlMs) => void (await this.maintain(ANNOUNCE_SQL, INSTANCE_KEY(this.owner), ttlMs)),
      instances: async () => (await this.all<{ name: string }>(INSTANCES_SQL)).map((r) => r.name),
      retire: async () => void (await this.maintain(RETIRE_SQL, INSTANCE_KEY(this.owner))),
      onLost: (listener) => void this.lostListeners.push(listener),
    };
  }

  /** Connects (proving the database is reachable) and brings the schema up to date. */
  static async open(url: string, location: string, options: PgJournalOptions): Promise<PgJournal> {
    const secrets = urlSecrets(url);
    const pool = new pg.Pool({
      connectionString: url,
      max: POOL_SIZE,
      keepAlive: true,
      keepAliveInitialDelayMillis: 5_000,
      connectionTimeoutMillis: PG_TIMEOUTS.connectMs,
      query_timeout: PG_TIMEOUTS.queryMs,
      statement_timeout: PG_TIMEOUTS.statementMs,
      lock_timeout: PG_TIMEOUTS.lockMs,
      idle_in_transaction_session_timeout: PG_TIMEOUTS.idleInTxMs,
      application_name: 'gridsync',
      types,
    });
    // An idle connection the server closes (restart, pg_terminate_backend) must not crash the
    // process: the pool drops it and the next query opens a new one.
    pool.on('error', ignore);
    const journal = new PgJournal(pool, location, secrets, options);
    try {
      if (options.migrate !== false) await journal.migrate();
      else await journal.query('SELECT 1');
    } catch (err) {
      await pool.end().catch(() => undefined);
      throw journal.wrap(err);
    }
    return journal;
  }

  async get<T>(sql: string, ...params: unknown[]): Promise<T | undefined> {
    return (await this.query(sql, params)).rows[0] as T | undefined;
  }

  async all<T>(sql: string, ...params: unknown[]): Promise<T[]> {
    return (await this.query(sql, params)).rows as T[];
  }

  async maintain(sql: string, ...params: unknown[]): Promise<number> {
    return (await this.query(sql, params)).rowCount ?? 0;
  }

  async getMeta(key: string): Promise<string | undefined> {
    return (await this.get<{ value: string }>(GET_META_SQL, key))?.value;
  }

  async setMeta(key: string, value: string): Promise<void> {
    await this.maintain(SET_META_SQL, ...metaParams(key, value));
  }

  pruneEvents(olderThanMs: number): Promise<number> {
    return this.maintain(PRUNE_EVENTS_SQL, this.now() - olderThanMs);
  }

  async schemaVersion(): Promise<number> {
    const row = await this.get<{ v: number | null }>(
      "SELECT CASE WHEN to_regclass('schema_migrations') IS NULL THEN 0 ELSE (SELECT coalesce(max(version), 0) FROM schema_migrations) END AS v",
    );
    return row?.v ?? 0;
  }

  /** Group commit (`JournalStore.commit`): no lingering — a batch in flight is the window. */
  commit<T>(fn: (tx: JournalTx) => Promise<T>, _options?: unknown): Promise<T> {
    if (this.closed) return Promise.reject(new JournalUnavailableError(this.location, 'the journal is closed'));
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ fn, resolve: resolve as (v: unknown) => void, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.flushing || this.flushScheduled || this.pending.length === 0) return;
    this.flushScheduled = true;
    setImmediate(() => void this.flush());
  }

  private async flush(): Promise<void> {
    this.flushScheduled = false;
    if (this.flushing || this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    this.flushing = true;
    this.idle = new Promise((r) => (this.markIdle = r));
    const results: { ok: boolean; value: unknown }[] = [];
    let client: pg.PoolClient | undefined;
    try {
      client = await this.pool.connect();
      const c = client;
      // The server may end this connection while we hold it (idle-in-transaction timeout, a
      // terminated backend): the query in flight fails; the event must not crash the process.
      c.on('error', ignore);
      // Round trips are the cost here: each item's savepoint is released and the next one set in
      // one simple query, and COMMIT releases the last one.
      await c.query('BEGIN; SAVEPOINT item');
      const fenced = new Set<number>();
      for (const [i, p] of batch.entries()) {
        const last = i === batch.length - 1;
        const itemFenced = new Set<number>();
        try {
          const value = await p.fn(this.txOn(c, fenced, itemFenced));
          if (!last) await c.query('RELEASE SAVEPOINT item; SAVEPOINT item');
          for (const m of itemFenced) fenced.add(m);
          results.push({ ok: true, value });
        } catch (err) {
          // A broken connection fails the whole batch (the ROLLBACK TO throws); anything else
          // (an illegal transition, a lost lease) rolls back this item alone, and the savepoint
          // stays set for the next item.
          await c.query('ROLLBACK TO SAVEPOINT item');
          results.push({ ok: false, value: err });
        }
      }
      await c.query('COMMIT');
      c.off('error', ignore);
      client.release();
    } catch (err) {
      client?.off('error', ignore);
      // Nothing of this batch is known to be durable: a COMMIT whose answer was lost may still
      // have committed, which the transitions' own state checks make harmless on a retry.
      client?.release(true);
      const wrapped = this.wrap(err);
      for (const p of batch) p.reject(wrapped);
      return this.endFlush();
    }
    batch.forEach((p, i) => {
      const r = results[i] as { ok: boolean; value: unknown };
      if (r.ok) p.resolve(r.value);
      else p.reject(r.value);
    });
    this.endFlush();
  }

  private endFlush(): void {
    this.flushing = false;
    this.markIdle();
    this.schedule();
  }

  private txOn(c: pg.PoolClient, fenced: Set<number>, itemFenced: Set<number>): JournalTx {
    const run = (sql: string, params: unknown[]) => c.query(this.config(sql, params));
    const fence = async (mailboxId: number): Promise<void> => {
      if (fenced.has(mailboxId) || itemFenced.has(mailboxId)) return;
      const token = this.held.get(mailboxId);
      const ok = token !== undefined && ((await run(FENCE_SQL, [mailboxId, this.owner, token])).rowCount ?? 0) > 0;
      if (!ok) {
        this.lose(mailboxId);
        throw new JournalLeaseLostError(mailboxId, this.owner);
      }
      itemFenced.add(mailboxId);
    };
    const write = async <T>(mailboxId: number, sql: string, ...params: unknown[]) => {
      await fence(mailboxId);
      const r = await run(sql, params);
      return { rows: r.rows as T[], changes: r.rowCount ?? 0 };
    };
    return {
      get: async <T>(sql: string, ...params: unknown[]) => (await run(sql, params)).rows[0] as T | undefined,
      all: async <T>(sql: string, ...params: unknown[]) => (await run(sql, params)).rows as T[],
      write,
      recordEvent: async (event: EventInput) => {
        if (event.mailboxId !== undefined && event.mailboxId !== null) await fence(event.mailboxId);
        await run(INSERT_EVENT_SQL, eventParams(this.now(), event));
      },
    };
  }

  /** A named (server-side prepared, per connection) statement for each SQL text. */
  private config(sql: string, params: readonly unknown[]): pg.QueryConfig {
    return { name: statementName(sql), text: toPgPlaceholders(sql), values: [...params] };
  }

  private async query(sql: string, params: readonly unknown[] = []): Promise<pg.QueryResult> {
    try {
      return await this.pool.query(this.config(sql, params));
    } catch (err) {
      throw this.wrap(err);
    }
  }

  private async acquire(mailboxId: number, ttlMs: number): Promise<Lease | undefined> {
    const mine = this.held.get(mailboxId) ?? 0;
    const row = await this.get<LeaseDbRow>(ACQUIRE_SQL, mailboxId, this.owner, ttlMs, mine, mine);
    if (!row) return undefined;
    this.held.set(mailboxId, row.token);
    return toLease(row);
  }

  private async renew(lease: Lease, ttlMs: number): Promise<Lease | undefined> {
    const row = await this.get<LeaseDbRow>(RENEW_SQL, ttlMs, lease.mailboxId, this.owner, lease.token);
    if (!row) {
      if (this.held.get(lease.mailboxId) === lease.token) this.lose(lease.mailboxId);
      return undefined;
    }
    return toLease(row);
  }

  /** This instance learnt it no longer holds the mailbox: forget the token, tell the listeners once. */
  private lose(mailboxId: number): void {
    if (this.held.delete(mailboxId)) for (const l of this.lostListeners) l(mailboxId);
  }

  private async release(lease: Lease): Promise<void> {
    // Forget the token first: a write racing the release is refused rather than slipped in.
    if (this.held.get(lease.mailboxId) === lease.token) this.held.delete(lease.mailboxId);
    await this.maintain(RELEASE_SQL, lease.mailboxId, this.owner, lease.token);
  }

  private async listLeases(): Promise<LeaseRow[]> {
    const rows = await this.all<LeaseDbRow & { live: boolean; remaining_ms: number }>(LIST_SQL);
    return rows.map((r) => ({ ...toLease(r), live: r.live, remainingMs: r.remaining_ms }));
  }

  /** Migrations, one transaction each, serialised between instances starting together. */
  private async migrate(): Promise<void> {
    const c = await this.pool.connect();
    c.on('error', ignore);
    try {
      await c.query('BEGIN');
      // A transaction-scoped advisory lock is right here (unlike for leases): it only orders
      // schema changes and ends with the transaction.
      await c.query("SELECT pg_advisory_xact_lock(hashtext('gridsync.journal.migrate'))");
      await c.query(
        'CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
      );
      const current = Number((await c.query('SELECT coalesce(max(version), 0) AS v FROM schema_migrations')).rows[0].v);
      const known = PG_MIGRATIONS.at(-1)?.version ?? 0;
      if (current > known) throw new JournalSchemaTooNewError(this.location, current, known);
      for (const m of PG_MIGRATIONS.filter((x: Migration) => x.version > current)) {
        await c.query(m.sql);
        await c.query('INSERT INTO schema_migrations (version, description) VALUES ($1, $2)', [m.version, m.description]);
      }
      await c.query('COMMIT');
      c.off('error', ignore);
      c.release();
    } catch (err) {
      c.off('error', ignore);
      c.release(true);
      throw err;
    }
  }

  /** Errors leave this module typed, with the password scrubbed from their text. */
  private wrap(err: unknown): Error {
    if (err instanceof JournalLeaseLostError || err instanceof JournalSchemaTooNewError || err instanceof JournalUnavailableError)
      return err;
    const e = err as { message?: string; code?: string };
    return new JournalUnavailableError(this.location, scrubSecrets(String(e.message ?? err), this.secrets), e.code);
  }

  /**
   * Safe to call twice. Commits still waiting are written first; then the leases still held are
   * handed back (a planned stop: another instance takes over at once instead of after expiry).
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    while (this.flushing || this.pending.length > 0) {
      if (!this.flushing) await this.flush();
      else await this.idle;
    }
    const held = [...this.held];
    this.held.clear();
    await Promise.all(held.map(([mailboxId, token]) => this.maintain(RELEASE_SQL, mailboxId, this.owner, token).catch(() => undefined)));
    await this.pool.end();
  }
}

const ignore = (): void => undefined;

const names = new Map<string, string>();
function statementName(sql: string): string {
  let name = names.get(sql);
  if (name === undefined) {
    name = `gridsync_${names.size + 1}`;
    names.set(sql, name);
  }
  return name;
}
