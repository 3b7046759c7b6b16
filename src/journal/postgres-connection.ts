/**
 * Connections to the PostgreSQL journal: the pool and its server-side limits, how SQL and values
 * cross the wire, and the URL's password kept out of every message.
 *
 * `pg` traps: TCP keepalive on (a dead peer would otherwise hang a query until the OS notices);
 * statement, lock and idle-in-transaction timeouts are startup options, so a frozen holder inside
 * a transaction (a stopped process) is cut off by the server and cannot block a takeover for
 * longer than `idleInTxMs`. A connection the server killed is dropped from the pool and the next
 * batch opens a new one.
 */
import type pg from 'pg';

/** Server-side limits every connection starts with (ms). */
export const PG_TIMEOUTS = { statementMs: 10_000, lockMs: 3_000, idleInTxMs: 2_000, connectMs: 5_000, queryMs: 15_000 } as const;
const POOL_SIZE = 4;

export const ignore = (): void => undefined;

/**
 * `pg` is loaded here, when a PostgreSQL journal is opened, not when the journal's modules are:
 * every command of a SQLite installation (a cron job's `once` each night) paid ~60 ms of CPU at
 * start-up to load a driver it never used.
 */
export async function openPool(url: string): Promise<pg.Pool> {
  const { default: driver } = await import('pg');
  /** bigint (int8) columns as numbers: every id and millisecond timestamp we keep is below 2^53. */
  const types = {
    getTypeParser: ((oid: number, format?: string) =>
      oid === driver.types.builtins.INT8
        ? (v: string) => Number(v)
        : driver.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
  };
  const pool = new driver.Pool({
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
    // independent items share round trips (see ./postgres-batch.ts).
    pipeline: true,
    types,
  });
  // A connection the server closes (restart, pg_terminate_backend) must not crash the process in
  // any state: idle in the pool (the pool's error event: it drops the connection, the next query
  // opens a new one) or checked out. A checked-out client emits 'error' when the server's message
  // finds no query running; with no listener that throws — a PostgreSQL restart under the chaos
  // test once killed an instance so, though each path that checks a client out listens while it
  // holds it. So every client listens from its first connect for as long as it lives; what a
  // query in flight needs to know reaches it as that query's own error.
  pool.on('error', ignore);
  pool.on('connect', (client) => client.on('error', ignore));
  return pool;
}

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

const names = new Map<string, string>();
function statementName(sql: string): string {
  let name = names.get(sql);
  if (name === undefined) {
    name = `gridsync_${names.size + 1}`;
    names.set(sql, name);
  }
  return name;
}

/** A named (server-side prepared, per connection) statement for each SQL text. */
export function statement(sql: string, params: readonly unknown[]): pg.QueryConfig {
  return { name: statementName(sql), text: toPgPlaceholders(sql), values: [...params] };
}

/** The URL's password, in the forms it may be echoed (for scrubbing). */
export function urlSecrets(url: string): string[] {
  try {
    const password = new URL(url).password;
    return password ? [password, decodeURIComponent(password)] : [];
  } catch {
    const m = /\/\/[^/@\s:]*:([^/@\s]*)@/.exec(url);
    return m?.[1] ? [m[1]] : [];
  }
}

/**
 * The statements the items of a batch send in one turn of the event loop leave in one write to the
 * socket instead of one each: under load, a system call per statement cost more CPU than the rest
 * of the client. The socket is corked at the first and uncorked once the turn's callbacks have run.
 */
export function coalescer(c: pg.PoolClient): () => void {
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
