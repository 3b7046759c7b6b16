/**
 * Mailbox leases on PostgreSQL (`Leases`), and the fence every write passes.
 *
 * The fence, `SELECT … FROM lease … FOR SHARE` with this instance's token, runs inside the
 * writing transaction (once per transaction and mailbox): no row means another instance took the
 * lease over, and the write is refused with `JournalLeaseLostError`. The lock taken FOR SHARE
 * makes a takeover wait until the transaction ends, so no write under an old token can commit
 * after the token changed. Lease expiry is computed on the server's clock (`clock_timestamp()`),
 * never on ours.
 */
import type pg from 'pg';
import { JournalLeaseLostError, servedMailboxes, type Lease, type LeaseRow } from './lease.js';
import { statement } from './postgres-connection.js';
import type { Leases } from './store.js';

const FENCE_SQL = 'SELECT 1 AS held FROM lease WHERE mailbox_id = ? AND owner = ? AND token = ? FOR SHARE';
/**
 * Take a free or expired lease (a new token), or renew our own unexpired one with the token we
 * hold (token kept). A process that restarts under the same name never inherits its old token.
 *
 * A new token is above the row's and above the highest the mailbox ever had, kept in `meta`
 * (`lease-token:<mailbox>`) by the same statement: the lease rows may be deleted under us (a
 * TRUNCATE, a restore without them), and a fresh row at 1 made tokens go back and repeat — an
 * earlier holder's staging files then passed for the new holder's own (never removed as
 * orphans), and a same-named process frozen under an old token had its writes accepted again.
 * `meta` can go with them (a DBA emptying both, an older backup restored), and no other table
 * keeps every token issued (an upload leaves none), so a token is also at least the server's
 * clock in microseconds: what nobody resets with the tables. Tokens go back only if both the
 * tables and the server's clock do.
 */
const ACQUIRE_SQL = `
  WITH seen AS (
    SELECT greatest(coalesce(max(value::bigint), 0) + 1, (extract(epoch FROM clock_timestamp()) * 1000000)::bigint) AS next
    FROM meta WHERE key = ?),
  taken AS (
    INSERT INTO lease AS l (mailbox_id, owner, token, expires_at)
    VALUES (?, ?, (SELECT next FROM seen), clock_timestamp() + ?::bigint * interval '1 millisecond')
    ON CONFLICT (mailbox_id) DO UPDATE SET
      token = CASE WHEN l.owner = excluded.owner AND l.token = ?::bigint AND l.expires_at >= clock_timestamp() THEN l.token
                   ELSE greatest(l.token + 1, (SELECT next FROM seen)) END,
      owner = excluded.owner,
      expires_at = excluded.expires_at
    WHERE (l.owner = excluded.owner AND l.token = ?::bigint) OR l.expires_at < clock_timestamp()
    RETURNING mailbox_id, owner, token, expires_at),
  noted AS (
    INSERT INTO meta (key, value) SELECT ?, token::text FROM taken
    ON CONFLICT (key) DO UPDATE SET value = excluded.value WHERE meta.value::bigint < excluded.value::bigint)
  SELECT * FROM taken`;
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
 * ms since the epoch on the server's clock, and `serves:<name>` holding the mailboxes it serves
 * (`servedMailboxes`; a row of its own, so that an older version still reads `instance:` values as
 * numbers). Announcements of instances gone for a day are removed, with what they served.
 */
const ANNOUNCE_SQL = `
  WITH gone AS (DELETE FROM meta WHERE key LIKE 'instance:%' AND value::bigint < (extract(epoch FROM clock_timestamp()) * 1000)::bigint - 86400000),
  stray AS (DELETE FROM meta s WHERE s.key LIKE 'serves:%' AND s.key <> ?
    AND NOT EXISTS (SELECT 1 FROM meta i WHERE i.key = 'instance:' || substr(s.key, 8))),
  serves AS (INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value)
  INSERT INTO meta (key, value) VALUES (?, ((extract(epoch FROM clock_timestamp()) * 1000)::bigint + ?::bigint)::text)
  ON CONFLICT (key) DO UPDATE SET value = excluded.value`;
const INSTANCES_SQL =
  "SELECT substr(key, 10) AS name FROM meta WHERE key LIKE 'instance:%' AND value::bigint > (extract(epoch FROM clock_timestamp()) * 1000)::bigint ORDER BY key";
const PEERS_SQL = `
  SELECT substr(i.key, 10) AS name FROM meta i LEFT JOIN meta s ON s.key = 'serves:' || substr(i.key, 10)
  WHERE i.key LIKE 'instance:%' AND i.value::bigint > (extract(epoch FROM clock_timestamp()) * 1000)::bigint
    AND (s.value IS NULL OR s.value = ?)
  ORDER BY i.key`;
const RETIRE_SQL = 'DELETE FROM meta WHERE key IN (?, ?)';
const INSTANCE_KEY = (name: string): string => `instance:${name}`;
const SERVES_KEY = (name: string): string => `serves:${name}`;
/** The `meta` key of the highest token a mailbox's lease ever had. */
const TOKEN_KEY = (mailboxId: number): string => `lease-token:${mailboxId}`;

type LeaseDbRow = { mailbox_id: number; owner: string; token: number; expires_at: Date };
const toLease = (r: LeaseDbRow): Lease => ({ mailboxId: r.mailbox_id, owner: r.owner, token: r.token, expiresAt: r.expires_at });

/** How the leases reach the database: a statement outside any batch, errors already typed. */
export type PgQuery = (sql: string, params: readonly unknown[]) => Promise<pg.QueryResult>;

export class PgLeases implements Leases {
  /** Tokens of the leases this instance holds, by mailbox: what every write is fenced with. */
  private readonly held = new Map<number, number>();
  private readonly lostListeners: ((mailboxId: number) => void)[] = [];
  private readonly refusedListeners: ((mailboxId: number) => void)[] = [];

  constructor(
    readonly owner: string,
    private readonly query: PgQuery,
  ) {}

  async acquire(mailboxId: number, ttlMs: number): Promise<Lease | undefined> {
    const mine = this.held.get(mailboxId) ?? 0;
    const key = TOKEN_KEY(mailboxId);
    const row = (await this.query(ACQUIRE_SQL, [key, mailboxId, this.owner, ttlMs, mine, mine, key])).rows[0] as LeaseDbRow | undefined;
    if (!row) return undefined;
    this.held.set(mailboxId, row.token);
    return toLease(row);
  }

  async renew(lease: Lease, ttlMs: number): Promise<Lease | undefined> {
    const row = (await this.query(RENEW_SQL, [ttlMs, lease.mailboxId, this.owner, lease.token])).rows[0] as LeaseDbRow | undefined;
    if (!row) {
      if (this.held.get(lease.mailboxId) === lease.token) this.lose(lease.mailboxId);
      return undefined;
    }
    return toLease(row);
  }

  async release(lease: Lease): Promise<void> {
    // Forget the token first: a write racing the release is refused rather than slipped in.
    if (this.held.get(lease.mailboxId) === lease.token) this.held.delete(lease.mailboxId);
    await this.query(RELEASE_SQL, [lease.mailboxId, this.owner, lease.token]);
  }

  /** A planned stop: every lease still held handed back (another instance takes over at once instead of after expiry). */
  async releaseAll(): Promise<void> {
    const held = [...this.held];
    this.held.clear();
    await Promise.all(held.map(([mailboxId, token]) => this.query(RELEASE_SQL, [mailboxId, this.owner, token]).catch(() => undefined)));
  }

  async list(): Promise<LeaseRow[]> {
    const rows = (await this.query(LIST_SQL, [])).rows as (LeaseDbRow & { live: boolean; remaining_ms: number })[];
    return rows.map((r) => ({ ...toLease(r), live: r.live, remainingMs: r.remaining_ms }));
  }

  async announce(ttlMs: number, mailboxIds: readonly number[]): Promise<void> {
    const serves = SERVES_KEY(this.owner);
    await this.query(ANNOUNCE_SQL, [serves, serves, servedMailboxes(mailboxIds), INSTANCE_KEY(this.owner), ttlMs]);
  }

  async instances(): Promise<string[]> {
    return ((await this.query(INSTANCES_SQL, [])).rows as { name: string }[]).map((r) => r.name);
  }

  async peers(mailboxIds: readonly number[]): Promise<string[]> {
    return ((await this.query(PEERS_SQL, [servedMailboxes(mailboxIds)])).rows as { name: string }[]).map((r) => r.name);
  }

  async retire(): Promise<void> {
    await this.query(RETIRE_SQL, [INSTANCE_KEY(this.owner), SERVES_KEY(this.owner)]);
  }

  onLost(listener: (mailboxId: number) => void): void {
    this.lostListeners.push(listener);
  }

  onWriteRefused(listener: (mailboxId: number) => void): void {
    this.refusedListeners.push(listener);
  }

  /** A commit was refused for a stale or missing token (counted once per commit, on its final outcome). */
  refused(mailboxId: number): void {
    for (const l of this.refusedListeners) l(mailboxId);
  }

  /** The fence, on the writing transaction's connection: this instance still holds the mailbox with its token. */
  async check(c: pg.PoolClient, mailboxId: number): Promise<void> {
    const token = this.held.get(mailboxId);
    const ok = token !== undefined && ((await c.query(statement(FENCE_SQL, [mailboxId, this.owner, token]))).rowCount ?? 0) > 0;
    if (!ok) {
      this.lose(mailboxId);
      throw new JournalLeaseLostError(mailboxId, this.owner);
    }
  }

  /** This instance learnt it no longer holds the mailbox: forget the token, tell the listeners once. */
  private lose(mailboxId: number): void {
    if (this.held.delete(mailboxId)) for (const l of this.lostListeners) l(mailboxId);
  }
}
