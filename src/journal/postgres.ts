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
import { isGridsyncError, scrubSecrets } from '../errors/index.js';
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
  type CommitOptions,
  type EventInput,
  type JournalStore,
  type JournalTx,
  type Leases,
} from './store.js';
import { JournalUnavailableError } from './unavailable-error.js';

/** The schema version this build writes and expects on PostgreSQL. */
export const PG_SCHEMA_VERSION = PG_MIGRATIONS.at(-1)?.version ?? 0;

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
/** A batch's events in one statement, in the order they were recorded. */
const INSERT_EVENTS_BULK_SQL = `
  INSERT INTO events (at, direction, mailbox_id, item, from_state, to_state, detail)
  SELECT at, direction, mailbox_id, item, from_state, to_state, detail
  FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[])
    WITH ORDINALITY AS e (at, direction, mailbox_id, item, from_state, to_state, detail, n)
  ORDER BY n`;
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
  /** `CommitOptions.independent`. */
  readonly independent: boolean;
}

type Outcome = { ok: boolean; value: unknown };

/** What one item did in a pipelined batch: whether it wrote, and the events it recorded. */
interface ItemState {
  wrote: boolean;
  readonly events: unknown[][];
}

/** Rows as one array per column (the bulk insert's parameters). */
function columns(rows: readonly (readonly unknown[])[], width: number): unknown[][] {
  return Array.from({ length: width }, (_, k) => rows.map((r) => r[k]));
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
  private readonly refusedListeners: ((mailboxId: number) => void)[] = [];
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
      onWriteRefused: (listener) => void this.refusedListeners.push(listener),
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
      // Statements are sent without waiting for the answer to the one before: a batch's
      // independent items share round trips (see runPipelined).
      pipeline: true,
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
    // Two statements: one naming the table fails to plan while the table does not exist, whatever CASE guards it.
    const present = await this.get<{ t: string | null }>("SELECT to_regclass('schema_migrations')::text AS t");
    if (!present?.t) return 0;
    return (await this.get<{ v: number }>('SELECT coalesce(max(version), 0) AS v FROM schema_migrations'))?.v ?? 0;
  }

  /** Group commit (`JournalStore.commit`): no lingering — a batch in flight is the window. */
  commit<T>(fn: (tx: JournalTx) => Promise<T>, options?: CommitOptions): Promise<T> {
    if (this.closed) return Promise.reject(new JournalUnavailableError(this.location, 'the journal is closed'));
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ fn, resolve: resolve as (v: unknown) => void, reject, independent: options?.independent === true });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.flushing || this.flushScheduled || this.pending.length === 0) return;
    this.flushScheduled = true;
    setImmediate(() => void this.flush());
  }

  /**
   * One batch, one transaction. Round trips are the cost on PostgreSQL, so the batch is first run
   * the fast way (`runPipelined`); only when an item fails in a way its own rollback would need
   * (it threw after writing, or the database refused a statement) is the transaction rolled back
   * and the batch replayed one item at a time, each in its own savepoint (`runInSavepoints`).
   * The items' functions only read and write through their transaction, so running them again is
   * safe.
   */
  private async flush(): Promise<void> {
    this.flushScheduled = false;
    if (this.flushing || this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    this.flushing = true;
    this.idle = new Promise((r) => (this.markIdle = r));
    let results: Outcome[] | undefined;
    let client: pg.PoolClient | undefined;
    try {
      client = await this.pool.connect();
      const c = client;
      // The server may end this connection while we hold it (idle-in-transaction timeout, a
      // terminated backend): the query in flight fails; the event must not crash the process.
      c.on('error', ignore);
      results = await this.runPipelined(c, batch);
      if (results === undefined) {
        await c.query('ROLLBACK');
        results = await this.runInSavepoints(c, batch);
      }
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
      const r = results[i] as Outcome;
      if (r.ok) return p.resolve(r.value);
      // Counted on the final outcome: an item replayed in savepoints was refused once, not twice.
      if (r.value instanceof JournalLeaseLostError) for (const l of this.refusedListeners) l(r.value.mailboxId);
      p.reject(r.value);
    });
    this.endFlush();
  }

  /**
   * The fast way: no savepoints; consecutive independent items (`CommitOptions.independent`)
   * run concurrently on the pipelined connection, so their
   * statements share round trips; any other item runs alone, in commit order. Events are kept
   * and inserted at the end in one statement. An item that throws before writing anything (an
   * illegal transition, a lost lease) fails alone. Returns undefined when the batch must be
   * replayed in savepoints; the transaction is then still open.
   */
  private async runPipelined(c: pg.PoolClient, batch: readonly Pending[]): Promise<Outcome[] | undefined> {
    // Sent, not awaited: the items' first statements follow it in the same round trip.
    const begun = c.query('BEGIN');
    begun.catch(ignore);
    const fences = new Map<number, Promise<void>>();
    const fence = (mailboxId: number): Promise<void> => {
      let f = fences.get(mailboxId);
      if (f === undefined) {
        f = this.checkLease(c, mailboxId);
        // Items of other mailboxes may not wait for it; each that does sees the rejection.
        f.catch(ignore);
        fences.set(mailboxId, f);
      }
      return f;
    };
    const coalesce = coalescer(c);
    const results: Outcome[] = [];
    const events: unknown[][][] = [];
    let replay = false;
    const runItem = async (p: Pending, i: number): Promise<void> => {
      const item: ItemState = { wrote: false, events: [] };
      try {
        results[i] = { ok: true, value: await p.fn(this.txOn(c, fence, item, coalesce)) };
        events[i] = item.events;
      } catch (err) {
        results[i] = { ok: false, value: err };
        if (item.wrote || !isGridsyncError(err)) replay = true;
      }
    };
    for (let i = 0; i < batch.length;) {
      let j = i + 1;
      if ((batch[i] as Pending).independent) while (j < batch.length && (batch[j] as Pending).independent) j++;
      await Promise.all(batch.slice(i, j).map((p, k) => runItem(p, i + k)));
      i = j;
    }
    await begun;
    // A statement the database refused inside a function that caught it leaves the transaction aborted.
    if (replay || c.getTransactionStatus() === 'E') return undefined;
    const rows = events.flat();
    const inserted =
      rows.length > 0 ? c.query({ name: 'gridsync_events_bulk', text: INSERT_EVENTS_BULK_SQL, values: columns(rows, 7) }) : undefined;
    // COMMIT rides with the insert; it is only trusted once the insert succeeded (on an aborted
    // transaction PostgreSQL answers COMMIT with a rollback, not an error).
    const committed = c.query('COMMIT');
    committed.catch(ignore);
    await inserted;
    await committed;
    return results;
  }

  /** The safe way: one item after the other, each in its own savepoint, rolled back alone when it throws. */
  private async runInSavepoints(c: pg.PoolClient, batch: readonly Pending[]): Promise<Outcome[]> {
    // Each item's savepoint is released and the next one set in one simple query; COMMIT releases the last.
    await c.query('BEGIN; SAVEPOINT item');
    // Fences that held in a committed item: their FOR SHARE lock stays until COMMIT. One taken in
    // an item that rolled back was released with its savepoint, so it is taken again.
    const fenced = new Set<number>();
    const results: Outcome[] = [];
    for (const [i, p] of batch.entries()) {
      const last = i === batch.length - 1;
      const itemFenced = new Set<number>();
      const fence = async (mailboxId: number): Promise<void> => {
        if (fenced.has(mailboxId) || itemFenced.has(mailboxId)) return;
        await this.checkLease(c, mailboxId);
        itemFenced.add(mailboxId);
      };
      try {
        const value = await p.fn(this.txOn(c, fence));
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
    return results;
  }

  private endFlush(): void {
    this.flushing = false;
    this.markIdle();
    this.schedule();
  }

  /** The fence: this instance still holds the mailbox with its token, row locked FOR SHARE until the transaction ends. */
  private async checkLease(c: pg.PoolClient, mailboxId: number): Promise<void> {
    const token = this.held.get(mailboxId);
    const ok = token !== undefined && ((await c.query(this.config(FENCE_SQL, [mailboxId, this.owner, token]))).rowCount ?? 0) > 0;
    if (!ok) {
      this.lose(mailboxId);
      throw new JournalLeaseLostError(mailboxId, this.owner);
    }
  }

  /**
   * A transaction's view for one item. With `item`, its events are kept there (inserted together
   * at the end of the batch) and its first write is noted; without, events are inserted at once.
   */
  private txOn(c: pg.PoolClient, fence: (mailboxId: number) => Promise<void>, item?: ItemState, beforeSend?: () => void): JournalTx {
    const run = (sql: string, params: unknown[]) => {
      beforeSend?.();
      return c.query(this.config(sql, params));
    };
    return {
      get: async <T>(sql: string, ...params: unknown[]) => (await run(sql, params)).rows[0] as T | undefined,
      all: async <T>(sql: string, ...params: unknown[]) => (await run(sql, params)).rows as T[],
      write: async <T>(mailboxId: number, sql: string, ...params: unknown[]) => {
        if (item) item.wrote = true;
        // The fence goes out first and the write right behind it, without waiting for the
        // answer: the server runs them in that order in this transaction, and a refused fence
        // throws before anything commits (the write is rolled back with the item or the batch).
        const fenced = fence(mailboxId);
        const written = run(sql, params);
        written.catch(ignore);
        await fenced;
        const r = await written;
        return { rows: r.rows as T[], changes: r.rowCount ?? 0 };
      },
      recordEvent: async (event: EventInput) => {
        if (event.mailboxId !== undefined && event.mailboxId !== null) await fence(event.mailboxId);
        const params = eventParams(this.now(), event);
        if (item) item.events.push(params);
        else await run(INSERT_EVENT_SQL, params);
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
      if (current > PG_SCHEMA_VERSION) throw new JournalSchemaTooNewError(this.location, current, PG_SCHEMA_VERSION);
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

/**
 * The statements the items of a batch send in one turn of the event loop leave in one write to the
 * socket instead of one each: under load, a system call per statement cost more CPU than the rest
 * of the client. The socket is corked at the first and uncorked once the turn's callbacks have run.
 */
function coalescer(c: pg.PoolClient): () => void {
  const stream = (c as unknown as { connection: { stream: { cork(): void; uncork(): void } } }).connection.stream;
  let corked = false;
  return () => {
    if (corked) return;
    corked = true;
    stream.cork();
    process.nextTick(() => {
      corked = false;
      stream.uncork();
    });
  };
}

const names = new Map<string, string>();
function statementName(sql: string): string {
  let name = names.get(sql);
  if (name === undefined) {
    name = `gridsync_${names.size + 1}`;
    names.set(sql, name);
  }
  return name;
}
