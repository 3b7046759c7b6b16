/**
 * Group commit on PostgreSQL, as in SQLite: commits asked for while a batch is in flight wait and
 * go together in the next transaction. No lingering: a batch in flight is the window. Round trips
 * are the cost here, so a batch is first run the fast way (`runPipelined`); only when an item fails
 * in a way its own rollback would need is the transaction rolled back and the batch replayed one
 * item at a time, each in its own savepoint (`runInSavepoints`). The items' functions only read
 * and write through their transaction, so running them again is safe.
 *
 * Every write is fenced in its own transaction (`PgLeases.check`) — but an operator's, which holds
 * no lease (`CommitOptions.operator`) — and a commit resolves only once its transaction committed.
 */
import type pg from 'pg';
import { isGridsyncError } from '../errors/index.js';
import { JournalLeaseLostError } from './lease.js';
import { coalescer, ignore, statement } from './postgres-connection.js';
import type { PgLeases } from './postgres-leases.js';
import { eventParams, INSERT_EVENT_SQL, type CommitOptions, type EventInput, type JournalTx } from './store.js';

/** A batch's events in one statement, in the order they were recorded. */
const INSERT_EVENTS_BULK_SQL = `
  INSERT INTO events (at, direction, mailbox_id, item, from_state, to_state, detail)
  SELECT at, direction, mailbox_id, item, from_state, to_state, detail
  FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[])
    WITH ORDINALITY AS e (at, direction, mailbox_id, item, from_state, to_state, detail, n)
  ORDER BY n`;

interface Pending {
  readonly fn: (tx: JournalTx) => Promise<unknown>;
  readonly resolve: (v: unknown) => void;
  readonly reject: (e: unknown) => void;
  /** `CommitOptions.independent`. */
  readonly independent: boolean;
  /** `CommitOptions.operator`: its writes skip the lease check. */
  readonly operator: boolean;
}

type Outcome = { ok: boolean; value: unknown };

/** What one item did in a pipelined batch: whether it changed a row, and the events it recorded. */
interface ItemState {
  wrote: boolean;
  readonly events: unknown[][];
}

/** An operator's commit holds no lease to check (`CommitOptions.operator`). */
const UNFENCED = (): Promise<void> => Promise.resolve();

/**
 * An error the server sent for one item's statement (pg's DatabaseError: a SQLSTATE as `code`, a
 * `severity`): a read-only server's 25006, a dropped table's 42P01. It leaves the journal typed like
 * a broken connection does, so that what logs it or decides on it sees `JOURNAL_UNAVAILABLE` and
 * the SQLSTATE as `dbCode`, never a bare SQLSTATE as the code.
 */
function fromDatabase(err: unknown): boolean {
  return err instanceof Error && !isGridsyncError(err) && typeof (err as { severity?: unknown }).severity === 'string';
}

/** Rows as one array per column (the bulk insert's parameters). */
function columns(rows: readonly (readonly unknown[])[], width: number): unknown[][] {
  return Array.from({ length: width }, (_, k) => rows.map((r) => r[k]));
}

export interface PgBatcherDeps {
  readonly pool: pg.Pool;
  readonly leases: PgLeases;
  readonly now: () => number;
  /** Errors leave the journal typed, the password scrubbed. */
  readonly wrap: (err: unknown) => Error;
  /** The error a failed commit is rejected with: the schema damage its failure revealed, if any (`./schema-watch.ts`). */
  readonly verdict: (err: Error) => Promise<Error>;
}

/**
 * Transactions in flight at once. A batch of independent commits starts while the one before is
 * still waiting for its round trips and its commit, instead of gathering until it ends: at a few
 * parcels in flight that wait was most of a transition's time. More would mean smaller batches,
 * each a transaction (and a WAL flush) of its own.
 */
const MAX_IN_FLIGHT = 2;

export class PgBatcher {
  private pending: Pending[] = [];
  private inFlight = 0;
  /** A batch holding an ordered (not independent) commit is in flight: nothing starts beside it. */
  private ordered = false;
  private flushScheduled = false;
  private waiters: (() => void)[] = [];

  constructor(private readonly deps: PgBatcherDeps) {}

  commit<T>(fn: (tx: JournalTx) => Promise<T>, options?: CommitOptions): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({
        fn,
        resolve: resolve as (v: unknown) => void,
        reject,
        independent: options?.independent === true,
        operator: options?.operator === true,
      });
      this.schedule();
    });
  }

  /** Resolves once no commit is waiting or in flight. */
  async drain(): Promise<void> {
    while (this.inFlight > 0 || this.pending.length > 0) {
      if (this.mayStart()) await this.flush();
      else await new Promise<void>((r) => this.waiters.push(r));
    }
  }

  /**
   * Alone, a batch may always start; beside others only when neither it nor they hold an ordered
   * commit, which must see every commit asked for before it committed (and be seen by those after).
   */
  private mayStart(): boolean {
    if (this.pending.length === 0) return false;
    if (this.inFlight === 0) return true;
    return this.inFlight < MAX_IN_FLIGHT && !this.ordered && this.pending.every((p) => p.independent);
  }

  private schedule(): void {
    if (this.flushScheduled || !this.mayStart()) return;
    this.flushScheduled = true;
    setImmediate(() => void this.flush());
  }

  /** One batch, one transaction. */
  private async flush(): Promise<void> {
    this.flushScheduled = false;
    if (!this.mayStart()) return;
    const batch = this.pending;
    this.pending = [];
    this.inFlight++;
    const ordered = batch.some((p) => !p.independent);
    if (ordered) this.ordered = true;
    let results: Outcome[] | undefined;
    let client: pg.PoolClient | undefined;
    try {
      client = await this.deps.pool.connect();
      // The server may end this connection while we hold it (idle-in-transaction timeout, a
      // terminated backend): the query in flight fails, and the connection's error event has a
      // listener for its whole life (openPool).
      const c = client;
      results = await this.runPipelined(c, batch);
      if (results === undefined) {
        await c.query('ROLLBACK');
        results = await this.runInSavepoints(c, batch);
      }
      client.release();
    } catch (err) {
      // Nothing of this batch is known to be durable: a COMMIT whose answer was lost may still
      // have committed, which the transitions' own state checks make harmless on a retry.
      client?.release(true);
      void this.deps.verdict(this.deps.wrap(err)).then((e) => {
        for (const p of batch) p.reject(e);
      });
      return this.endFlush(ordered);
    }
    batch.forEach((p, i) => {
      const r = results[i] as Outcome;
      if (r.ok) return p.resolve(r.value);
      // Counted on the final outcome: an item replayed in savepoints was refused once, not twice.
      if (r.value instanceof JournalLeaseLostError) this.deps.leases.refused(r.value.mailboxId);
      if (fromDatabase(r.value)) void this.deps.verdict(this.deps.wrap(r.value)).then(p.reject);
      else p.reject(r.value);
    });
    this.endFlush(ordered);
  }

  private endFlush(ordered: boolean): void {
    this.inFlight--;
    if (ordered) this.ordered = false;
    for (const w of this.waiters.splice(0)) w();
    this.schedule();
  }

  /**
   * The fast way: no savepoints; consecutive independent items (`CommitOptions.independent`)
   * run concurrently on the pipelined connection, so their statements share round trips; any
   * other item runs alone, in commit order. Events are kept and inserted at the end in one
   * statement. An item that throws before changing a row (an illegal transition, a lost lease)
   * fails alone. Returns undefined when the batch must be replayed in savepoints; the
   * transaction is then still open.
   */
  private async runPipelined(c: pg.PoolClient, batch: readonly Pending[]): Promise<Outcome[] | undefined> {
    // Sent, not awaited: the items' first statements follow it in the same round trip.
    const begun = c.query('BEGIN');
    begun.catch(ignore);
    const fences = new Map<number, Promise<void>>();
    const fence = (mailboxId: number): Promise<void> => {
      let f = fences.get(mailboxId);
      if (f === undefined) {
        f = this.deps.leases.check(c, mailboxId);
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
        results[i] = { ok: true, value: await p.fn(this.txOn(c, p.operator ? UNFENCED : fence, item, coalesce)) };
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
        await this.deps.leases.check(c, mailboxId);
        itemFenced.add(mailboxId);
      };
      try {
        const value = await p.fn(this.txOn(c, p.operator ? UNFENCED : fence));
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

  /**
   * A transaction's view for one item. With `item`, its events are kept there (inserted together
   * at the end of the batch) and whether it changed a row is noted; without, events are inserted
   * at once.
   */
  private txOn(c: pg.PoolClient, fence: (mailboxId: number) => Promise<void>, item?: ItemState, beforeSend?: () => void): JournalTx {
    const run = (sql: string, params: unknown[]) => {
      beforeSend?.();
      return c.query(statement(sql, params));
    };
    return {
      get: async <T>(sql: string, ...params: unknown[]) => (await run(sql, params)).rows[0] as T | undefined,
      all: async <T>(sql: string, ...params: unknown[]) => (await run(sql, params)).rows as T[],
      write: async <T>(mailboxId: number, sql: string, ...params: unknown[]) => {
        // The fence goes out first and the write right behind it, without waiting for the
        // answer: the server runs them in that order in this transaction, and a refused fence
        // throws before anything commits (the write is rolled back with the item or the batch).
        const fenced = fence(mailboxId);
        const written = run(sql, params);
        written.catch(ignore);
        try {
          await fenced;
          const r = await written;
          // A write that matched no row (a guarded transition refused) leaves nothing to roll back.
          if (item && (r.rowCount ?? 0) > 0) item.wrote = true;
          return { rows: r.rows as T[], changes: r.rowCount ?? 0 };
        } catch (err) {
          if (item) item.wrote = true;
          throw err;
        }
      },
      recordEvent: async (event: EventInput) => {
        if (event.mailboxId !== undefined && event.mailboxId !== null) await fence(event.mailboxId);
        const params = eventParams(this.deps.now(), event);
        if (item) item.events.push(params);
        else await run(INSERT_EVENT_SQL, params);
      },
    };
  }
}
