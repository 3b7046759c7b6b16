/**
 * The SQLite journal's group commit: every `commit()` asked for while the previous transaction is
 * written or fsynced shares the next transaction, and resolves once that transaction's WAL fsync
 * returned (the durability reasoning is in `db.ts`).
 */
import fs from 'node:fs';
import type { CommitOptions, JournalTx } from './store.js';

/** Group commit: the longest a commit waits for others to share its transaction (only in a burst). */
const LINGER_MS = 4;
/** Commits that come faster than this arrive together (one loop turn) and share a transaction anyway. */
const MIN_GAP_MS = 0.05;
/** …and the most transitions one transaction takes before it is committed at once. */
const MAX_BATCH = 64;

/** The connection a batch is written on. */
export interface BatchConnection {
  /** Runs one statement without parameters (BEGIN, SAVEPOINT, COMMIT…) on the connection. */
  run(sql: string): void;
  /** A transaction is open on the connection. */
  inTransaction(): boolean;
  /** What a commit's function sees: statements run at once, in the batch's transaction. */
  readonly tx: JournalTx;
  /** Descriptor of the WAL file, fsynced to make a batch durable; undefined when read-only. */
  walFd(): number | undefined;
}

/** How one commit's function ended: its value, or what it threw. */
interface Outcome {
  readonly ok: boolean;
  readonly value: unknown;
}

interface Pending {
  readonly fn: (tx: JournalTx) => Promise<unknown>;
  readonly resolve: (v: unknown) => void;
  readonly reject: (e: unknown) => void;
}

export class GroupCommit {
  private closed = false;
  private pending: Pending[] = [];
  private flushScheduled = false;
  /** A batch's transaction is open (its functions run between microtasks): the next one waits. */
  private flushing = false;
  /** An fsync of the WAL is running on the thread pool: commits wait for it to end. */
  private syncing = false;
  /** A failed WAL fsync: what reached the disk is unknown, so no later commit may report success. */
  private syncError: unknown;
  /** Mean gap between commit() calls in ms (exponentially weighted): is a burst on? */
  private arrivalGapMs = Number.POSITIVE_INFINITY;
  private lastArrival = 0;
  private lingerTimer: NodeJS.Timeout | undefined;
  /** Every commit waiting for the next transaction asked for `linger`. */
  private pendingMayLinger = true;
  /** Settles when the batch being written (and its fsync) is done: close() waits for it. */
  private idle: Promise<void> = Promise.resolve();
  private markIdle: () => void = () => undefined;

  constructor(private readonly conn: BatchConnection) {}

  /**
   * Group commit: runs `fn` in a transaction shared with every other `commit()` waiting, and
   * resolves once that transaction is durable. One that throws (an illegal transition) rolls back
   * alone: the batch runs first without savepoints, and if any `fn` throws, the transaction is
   * rolled back and the batch run again with a savepoint around each. So `fn` may run twice; it
   * must do nothing but journal statements (which the rollback undoes).
   *
   * One transaction per WAL fsync: the transaction commits on the event loop without an fsync
   * (WAL frames written to the page cache), then the WAL is fsynced on the thread pool while the
   * loop goes on; commits asked for meanwhile wait, and all run in the next transaction as soon as
   * that fsync returns. So the loop never waits for the disk, and a burst costs one transaction
   * (its page writes, its locks) per fsync instead of one per transition. `fn` (and any read in
   * this process) sees the new state before it is durable; nothing acts on a transition before
   * its promise resolves. A commit with `linger` may also wait for company before its
   * transaction starts (CommitOptions); until then reads still see the old state.
   */
  commit<T>(fn: (tx: JournalTx) => Promise<T>, options: CommitOptions = {}): Promise<T> {
    const now = performance.now();
    if (this.lastArrival > 0) {
      const gap = now - this.lastArrival;
      this.arrivalGapMs = Number.isFinite(this.arrivalGapMs) ? 0.75 * this.arrivalGapMs + 0.25 * gap : gap;
    }
    this.lastArrival = now;
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ fn, resolve: resolve as (v: unknown) => void, reject });
      this.pendingMayLinger &&= options.linger === true;
      this.schedule();
    });
  }

  /** Commits still waiting are written and made durable (on this thread); nothing starts after. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.lingerTimer) clearTimeout(this.lingerTimer);
    this.lingerTimer = undefined;
    // A batch still running (its functions, or its fsync on the thread pool) settles first.
    while (this.flushing || this.syncing) await this.idle;
    while (this.pending.length > 0) await this.flush(true);
  }

  /**
   * Starts the next transaction in the next loop turn — or LINGER_MS later, when every commit
   * waiting may linger and a burst is on. While a batch or an fsync runs nothing starts: its end
   * calls this.
   */
  private schedule(): void {
    if (this.syncing || this.flushing || this.pending.length === 0) return;
    const linger = this.pendingMayLinger && this.inBurst() && this.pending.length < MAX_BATCH;
    if (this.lingerTimer) {
      if (linger) return;
      // A commit that cannot wait (or a full batch) takes the lingering ones along now.
      clearTimeout(this.lingerTimer);
      this.lingerTimer = undefined;
      this.flushScheduled = false;
    }
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    if (linger) {
      this.lingerTimer = setTimeout(() => {
        this.lingerTimer = undefined;
        void this.flush();
      }, LINGER_MS);
    } else setImmediate(() => void this.flush());
  }

  /**
   * Commits keep coming, one every few hundred microseconds: a commit that may linger then waits
   * up to LINGER_MS for others to share its transaction. (Commits that arrive within one loop turn
   * share one anyway; a lone commit never waits.)
   */
  private inBurst(): boolean {
    return this.arrivalGapMs >= MIN_GAP_MS && this.arrivalGapMs * 2 <= LINGER_MS;
  }

  private async flush(syncNow = false): Promise<void> {
    this.flushScheduled = false;
    if (this.lingerTimer) {
      clearTimeout(this.lingerTimer);
      this.lingerTimer = undefined;
    }
    if (this.flushing || this.syncing || this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    this.pendingMayLinger = true;
    this.flushing = true;
    this.idle = new Promise((r) => (this.markIdle = r));
    let results: Outcome[];
    const { conn } = this;
    try {
      if (this.syncError !== undefined) throw this.syncError;
      conn.run('BEGIN IMMEDIATE');
      try {
        const plain = await this.runPlain(batch);
        if (plain) results = plain;
        else {
          conn.run('ROLLBACK');
          conn.run('BEGIN IMMEDIATE');
          results = await this.runInSavepoints(batch);
        }
        conn.run('COMMIT');
      } catch (err) {
        if (conn.inTransaction()) conn.run('ROLLBACK');
        throw err;
      }
    } catch (err) {
      // The commit itself failed (disk full, closed): nothing of this batch is durable.
      for (const p of batch) p.reject(err);
      return this.endFlush();
    }
    const settle = (err: unknown): void =>
      batch.forEach((p, i) => {
        const r = results[i] as Outcome;
        if (err !== undefined) p.reject(err);
        else if (r.ok) p.resolve(r.value);
        else p.reject(r.value);
      });
    const fd = conn.walFd();
    if (fd === undefined || results.every((r) => !r.ok)) {
      settle(undefined); // nothing written
      return this.endFlush();
    }
    if (syncNow) {
      try {
        fs.fsyncSync(fd);
      } catch (err) {
        this.syncError ??= err;
      }
      settle(this.syncError);
      return this.endFlush();
    }
    this.syncing = true;
    this.flushing = false;
    fs.fsync(fd, (err) => {
      this.syncing = false;
      // After a failed fsync what reached the disk is unknown: no later commit may report success.
      if (err) this.syncError ??= err;
      settle(this.syncError);
      this.endFlush();
    });
  }

  /**
   * The fast way: the batch's functions in order, without savepoints; undefined at the first that
   * throws (the caller rolls the transaction back and replays the batch in savepoints). A
   * savepoint makes SQLite keep a copy of every page the item is first to change (~8 % of the
   * journal's main-thread CPU in a burst), and it is needed only when one throws.
   */
  private async runPlain(batch: readonly Pending[]): Promise<Outcome[] | undefined> {
    const results: Outcome[] = [];
    for (const p of batch) {
      try {
        results.push({ ok: true, value: await p.fn(this.conn.tx) });
      } catch {
        return undefined;
      }
    }
    return results;
  }

  /** The safe way: each function in its own savepoint, rolled back alone when it throws. */
  private async runInSavepoints(batch: readonly Pending[]): Promise<Outcome[]> {
    const { conn } = this;
    const results: Outcome[] = [];
    for (const p of batch) {
      conn.run('SAVEPOINT item');
      try {
        results.push({ ok: true, value: await p.fn(conn.tx) });
        conn.run('RELEASE item');
      } catch (err) {
        conn.run('ROLLBACK TO item');
        conn.run('RELEASE item');
        results.push({ ok: false, value: err });
      }
    }
    return results;
  }

  private endFlush(): void {
    this.flushing = false;
    this.markIdle();
    if (!this.closed) this.schedule();
  }
}
