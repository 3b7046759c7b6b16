/**
 * The PostgreSQL journal: one database shared by every instance that serves the same mailboxes.
 * Its parts: the connections (`./postgres-connection.ts`), the leases and the fence every write
 * passes (`./postgres-leases.ts`), and group commit (`./postgres-batch.ts`). The URL's password
 * never appears in an error or a log: it is scrubbed from every message this journal raises, and
 * `location` shows the URL redacted.
 */
import type pg from 'pg';
import { scrubSecrets } from '../errors/index.js';
import { JournalLeaseLostError } from './lease.js';
import { planMigrations, type MigrationPlan } from './migration-plan.js';
import { PgBatcher } from './postgres-batch.js';
import { openPool, statement, urlSecrets } from './postgres-connection.js';
import { PgLeases } from './postgres-leases.js';
import { PG_MIGRATIONS } from './postgres-migrations.js';
import { JournalSchemaDamagedError } from './schema-damaged-error.js';
import { JournalSchemaTooNewError } from './schema-error.js';
import { SchemaWatch } from './schema-watch.js';
import {
  GET_META_SQL,
  metaParams,
  EVENTS_BEFORE,
  pruneRows,
  SET_META_SQL,
  type CommitOptions,
  type JournalStore,
  type JournalTx,
} from './store.js';
import { JournalUnavailableError } from './unavailable-error.js';

/** The tables of the connection's schema and their columns (`table.column`): what the migrations find already there. */
const PRESENT_OBJECTS_SQL = `
  SELECT table_name::text AS name FROM information_schema.tables WHERE table_schema = current_schema()
  UNION ALL
  SELECT table_name || '.' || column_name FROM information_schema.columns WHERE table_schema = current_schema()`;

const versionsOf = (rows: readonly { version: number }[]): number[] => rows.map((r) => Number(r.version));
const namesOf = (rows: readonly { name: string }[]): Set<string> => new Set(rows.map((r) => r.name));

/** The schema version this build writes and expects on PostgreSQL. */
export const PG_SCHEMA_VERSION = PG_MIGRATIONS.at(-1)?.version ?? 0;

export interface PgJournalOptions {
  /** This instance's name: the owner of its leases. */
  readonly owner: string;
  /** Milliseconds since the epoch, as written into rows; injectable for tests. */
  readonly now?: () => number;
  /** Apply migrations (default true); `status` and `doctor` only read. */
  readonly migrate?: boolean;
}

export class PgJournal implements JournalStore {
  readonly backend = 'postgres';
  readonly leases: PgLeases;
  readonly now: () => number;
  private readonly batcher: PgBatcher;
  private readonly schema: SchemaWatch;
  private closed = false;

  private constructor(
    private readonly pool: pg.Pool,
    readonly location: string,
    private readonly secrets: readonly string[],
    options: PgJournalOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.schema = new SchemaWatch(location, () => this.missingObjects());
    this.leases = new PgLeases(options.owner, (sql, params) => this.query(sql, params));
    this.batcher = new PgBatcher({
      pool,
      leases: this.leases,
      now: () => this.now(),
      wrap: (err) => this.wrap(err),
      verdict: (err) => this.schema.verdict(err),
    });
  }

  /** Connects (proving the database is reachable) and brings the schema up to date. */
  static async open(url: string, location: string, options: PgJournalOptions): Promise<PgJournal> {
    const pool = await openPool(url);
    const journal = new PgJournal(pool, location, urlSecrets(url), options);
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
    return pruneRows(this, 'events', EVENTS_BEFORE, this.now() - olderThanMs);
  }

  /**
   * The schema version as a start finds it: the highest recorded or, with the records lost and
   * the tables there (`./migration-plan.ts`), the highest whose tables and columns all exist —
   * status and doctor took such a journal for one gridsync had never run on.
   */
  async schemaVersion(): Promise<number> {
    const { recorded, plan } = await this.readSchema();
    return Math.max(0, ...recorded, ...plan.record);
  }

  /** What the schema lacks that its versions created, changing nothing (doctor): see `migrate`. */
  async missingObjects(): Promise<readonly string[]> {
    return (await this.readSchema()).plan.missing;
  }

  private async readSchema(): Promise<{ recorded: number[]; plan: MigrationPlan }> {
    // Two statements: one naming the table fails to plan while the table does not exist, whatever CASE guards it.
    const [table] = await this.unjudged<{ t: string | null }>("SELECT to_regclass('schema_migrations')::text AS t");
    const recorded = table?.t ? versionsOf(await this.unjudged<{ version: number }>('SELECT version FROM schema_migrations')) : [];
    return { recorded, plan: planMigrations(PG_MIGRATIONS, recorded, namesOf(await this.unjudged<{ name: string }>(PRESENT_OBJECTS_SQL))) };
  }

  /** The damage check's own statements: judged by it (`query`), their failure would wait for the check itself. */
  private async unjudged<T>(sql: string): Promise<T[]> {
    try {
      return (await this.pool.query(statement(sql, []))).rows as T[];
    } catch (err) {
      throw this.wrap(err);
    }
  }

  /** Group commit (`JournalStore.commit`, `./postgres-batch.ts`). */
  commit<T>(fn: (tx: JournalTx) => Promise<T>, options?: CommitOptions): Promise<T> {
    if (this.closed) return Promise.reject(new JournalUnavailableError(this.location, 'the journal is closed'));
    // Not one more step on a damaged schema: a step's writes may span tables, and every step of
    // an item depends on the ones before.
    if (this.schema.found) return Promise.reject(this.schema.found);
    return this.batcher.commit(fn, options);
  }

  /** A table or column found missing while this journal is in use (`./schema-watch.ts`); told once. */
  onSchemaDamaged(listener: (err: JournalSchemaDamagedError) => void): void {
    this.schema.onDamaged(listener);
  }

  private async query(sql: string, params: readonly unknown[] = []): Promise<pg.QueryResult> {
    try {
      return await this.pool.query(statement(sql, params));
    } catch (err) {
      throw await this.schema.verdict(this.wrap(err));
    }
  }

  /**
   * Migrations in one transaction, serialised between instances starting together. What runs is
   * decided by the objects present as well as by `schema_migrations` (`./migration-plan.ts`): a
   * version whose record was lost is recorded again, a journal missing a table is refused.
   */
  private async migrate(): Promise<void> {
    const c = await this.pool.connect();
    try {
      await c.query('BEGIN');
      // A transaction-scoped advisory lock is right here (unlike for leases): it only orders
      // schema changes and ends with the transaction.
      await c.query("SELECT pg_advisory_xact_lock(hashtext('gridsync.journal.migrate'))");
      await c.query(
        'CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
      );
      const recorded = versionsOf((await c.query('SELECT version FROM schema_migrations')).rows as { version: number }[]);
      const current = Math.max(0, ...recorded);
      if (current > PG_SCHEMA_VERSION) throw new JournalSchemaTooNewError(this.location, current, PG_SCHEMA_VERSION);
      const plan = planMigrations(PG_MIGRATIONS, recorded, namesOf((await c.query(PRESENT_OBJECTS_SQL)).rows as { name: string }[]));
      if (plan.missing.length > 0) throw new JournalSchemaDamagedError(this.location, plan.missing);
      for (const m of PG_MIGRATIONS) {
        if (plan.apply.includes(m.version)) await c.query(m.sql);
        if (plan.apply.includes(m.version) || plan.record.includes(m.version))
          await c.query('INSERT INTO schema_migrations (version, description) VALUES ($1, $2)', [m.version, m.description]);
      }
      await c.query('COMMIT');
      c.release();
    } catch (err) {
      c.release(true);
      throw err;
    }
  }

  /** Errors leave this journal typed, with the password scrubbed from their text. */
  private wrap(err: unknown): Error {
    if (
      err instanceof JournalLeaseLostError ||
      err instanceof JournalSchemaTooNewError ||
      err instanceof JournalSchemaDamagedError ||
      err instanceof JournalUnavailableError
    )
      return err;
    const e = err as { message?: string; code?: string };
    this.schema.saw(err);
    return new JournalUnavailableError(this.location, scrubSecrets(String(e.message ?? err), this.secrets), e.code);
  }

  /**
   * Safe to call twice. Commits still waiting are written first; then the leases still held are
   * handed back (a planned stop: another instance takes over at once instead of after expiry).
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.batcher.drain();
    await this.leases.releaseAll();
    await this.pool.end();
  }
}
