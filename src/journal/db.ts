/**
 * Opening the journal: pragmas on every open, migrations, the single-daemon lock, the event trail.
 *
 * Durability: WAL, and no commit reports success before the WAL is fsynced, so a committed
 * transition survives power loss. SQLite itself runs with synchronous=NORMAL (a commit writes its
 * WAL frames, no fsync); the journal fsyncs the WAL file itself: `transaction()` at once, on the
 * calling thread (what synchronous=FULL did), and `commit()` on libuv's thread pool, so the event
 * loop keeps working while the disk flushes, and every commit made while one fsync runs shares the
 * next. An fsync of the file covers every frame written before it started, whichever descriptor
 * wrote them; the WAL keeps its inode while a connection is open (SQLite deletes it only when the
 * last one closes). Checkpoints still fsync the WAL before copying it into the database, and the
 * database after. The pragmas are set on every open because a reopened WAL database does not keep
 * its synchronous setting. The journal must live on a local disk, never on a network share.
 *
 * The lock: one daemon per state directory. A second SQLite file (`<journal>.lock`) is held in an
 * open EXCLUSIVE transaction for the daemon's lifetime. SQLite's POSIX locks die with the process,
 * so a `kill -9` never leaves a stale lock behind, and a second daemon is refused at once with the
 * holder's pid. Read-only users (`gridsync status`) do not take the lock.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { GridsyncError } from '../errors/index.js';
import type { Lease } from './lease.js';
import { MIGRATIONS } from './migrations.js';
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

export type Db = Database.Database;

/** Group commit: the longest a commit waits for others to share its transaction (only in a burst). */
const LINGER_MS = 4;
/** Commits that come faster than this arrive together (one loop turn) and share a transaction anyway. */
const MIN_GAP_MS = 0.05;
/** …and the most transitions one transaction takes before it is committed at once. */
const MAX_BATCH = 64;

export interface OpenJournalOptions {
  /** Take the single-daemon lock (the daemon, `once`, `requeue`). Default true. */
  readonly lock?: boolean;
  /** Open read-only, no migrations, no lock (`status`). Default false. */
  readonly readonly?: boolean;
  /** Milliseconds since the epoch; injectable for tests. */
  readonly now?: () => number;
  /** This instance's name (the owner of its leases). */
  readonly owner?: string;
}

/** Thrown when another process already holds the journal lock. */
export class JournalLockedError extends GridsyncError {
  readonly code = 'JOURNAL_LOCKED';
  constructor(
    readonly journalPath: string,
    readonly holderPid: number | undefined,
  ) {
    super(
      `journal ${journalPath} is in use by another gridsync process${holderPid ? ` (pid ${holderPid})` : ''}; ` +
        'stop it first, or give this instance its own stateDir',
    );
    this.name = 'JournalLockedError';
  }
}

interface Pending {
  readonly fn: (tx: JournalTx) => Promise<unknown>;
  readonly resolve: (v: unknown) => void;
  readonly reject: (e: unknown) => void;
}

/** The single-host lock holds every mailbox for as long as the process lives. */
const FOREVER = new Date(8.64e15);

function localLeases(owner: string): Leases {
  return {
    owner,
    acquire: (mailboxId) => Promise.resolve({ mailboxId, owner, token: 1, expiresAt: FOREVER }),
    renew: (lease: Lease) => Promise.resolve(lease),
    release: () => Promise.resolve(),
    list: () => Promise.resolve([]),
    announce: () => Promise.resolve(),
    instances: () => Promise.resolve([owner]),
    retire: () => Promise.resolve(),
    onLost: () => undefined,
    onWriteRefused: () => undefined,
  };
}

export class Journal implements JournalStore {
  readonly backend = 'sqlite';
  readonly leases: Leases;
  private closed = false;
  private readonly insertEvent: Database.Statement;
  private pending: Pending[] = [];
  private flushScheduled = false;
  /** A batch's transaction is open (its functions run between microtasks): the next one waits. */
  private flushing = false;
  private readonly statements = new Map<string, Database.Statement>();
  /** Descriptor of the WAL file, fsynced to make commits durable; undefined when read-only. */
  private walFd: number | undefined;
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
  /** What a commit's function sees: statements run at once, on this connection, in the batch's transaction. */
  private readonly tx: JournalTx = {
    get: async <T>(sql: string, ...params: unknown[]) => this.statement(sql).get(...params) as T | undefined,
    all: async <T>(sql: string, ...params: unknown[]) => this.statement(sql).all(...params) as T[],
    write: async <T>(_mailboxId: number, sql: string, ...params: unknown[]) => {
      const st = this.statement(sql);
      if (st.reader) {
        const rows = st.all(...params) as T[];
        return { rows, changes: rows.length };
      }
      return { rows: [] as T[], changes: st.run(...params).changes };
    },
    recordEvent: async (event: EventInput) => this.recordEvent(event),
  };

  private constructor(
    readonly db: Db,
    readonly path: string,
    readonly now: () => number,
    private readonly lockDb: Db | undefined,
    owner: string,
  ) {
    this.insertEvent = db.prepare(INSERT_EVENT_SQL);
    this.leases = localLeases(owner);
  }

  get location(): string {
    return this.path;
  }

  static open(journalPath: string, options: OpenJournalOptions = {}): Journal {
    const now = options.now ?? Date.now;
    const owner = options.owner ?? 'local';
    if (options.readonly) {
      const db = new Database(journalPath, { readonly: true, fileMustExist: true });
      db.pragma('busy_timeout = 5000');
      return new Journal(db, journalPath, now, undefined, owner);
    }
    fs.mkdirSync(path.dirname(journalPath), { recursive: true, mode: 0o700 });
    const lockDb = options.lock === false ? undefined : acquireLock(journalPath);
    try {
      ensurePrivateFile(journalPath);
      const db = new Database(journalPath);
      db.pragma('journal_mode = WAL');
      // FULL until the WAL exists and its directory entry is durable (SQLite fsyncs the directory
      // of a WAL it creates on the first synced commit); NORMAL + our own fsync after that.
      db.pragma('synchronous = FULL');
      db.pragma('busy_timeout = 5000');
      db.pragma('foreign_keys = ON');
      migrate(db, journalPath);
      const journal = new Journal(db, journalPath, now, lockDb, owner);
      // Prove now that the journal is writable (a file owned by another user opens read-only
      // without complaint), so the daemon fails at start-up instead of at its first transition.
      journal.statement(SET_META_SQL).run('openedAt', new Date(now()).toISOString());
      journal.walFd = fs.openSync(`${journalPath}-wal`, 'r');
      db.pragma('synchronous = NORMAL');
      return journal;
    } catch (err) {
      lockDb?.close();
      throw err;
    }
  }

  /**
   * Run `fn` in one IMMEDIATE transaction (takes the write lock up front: no upgrade deadlocks),
   * durable when it returns: the WAL is fsynced on this thread. Pipelines use `commit()`.
   */
  transaction<T>(fn: () => T): T {
    const value = this.db.transaction(fn).immediate();
    if (this.walFd !== undefined) fs.fsyncSync(this.walFd);
    return value;
  }

  /** A prepared statement, cached by its SQL (preparing was 7 % of a busy pipeline's CPU). */
  statement(sql: string): Database.Statement {
    let st = this.statements.get(sql);
    if (!st) {
      st = this.db.prepare(sql);
      this.statements.set(sql, st);
    }
    return st;
  }

  async get<T>(sql: string, ...params: unknown[]): Promise<T | undefined> {
    return this.statement(sql).get(...params) as T | undefined;
  }

  async all<T>(sql: string, ...params: unknown[]): Promise<T[]> {
    return this.statement(sql).all(...params) as T[];
  }

  async maintain(sql: string, ...params: unknown[]): Promise<number> {
    return this.statement(sql).run(...params).changes;
  }

  /**
   * Group commit: runs `fn` in a transaction shared with every other `commit()` waiting, and
   * resolves once that transaction is durable. Each `fn` runs in its own savepoint, so one that
   * throws (an illegal transition) rolls back alone.
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
    const results: { ok: boolean; value: unknown }[] = [];
    try {
      if (this.syncError !== undefined) throw this.syncError;
      this.statement('BEGIN IMMEDIATE').run();
      try {
        for (const p of batch) {
          this.statement('SAVEPOINT item').run();
          try {
            results.push({ ok: true, value: await p.fn(this.tx) });
            this.statement('RELEASE item').run();
          } catch (err) {
            this.statement('ROLLBACK TO item').run();
            this.statement('RELEASE item').run();
            results.push({ ok: false, value: err });
          }
        }
        this.statement('COMMIT').run();
      } catch (err) {
        if (this.db.inTransaction) this.statement('ROLLBACK').run();
        throw err;
      }
    } catch (err) {
      // The commit itself failed (disk full, closed): nothing of this batch is durable.
      for (const p of batch) p.reject(err);
      return this.endFlush();
    }
    const settle = (err: unknown): void =>
      batch.forEach((p, i) => {
        const r = results[i] as { ok: boolean; value: unknown };
        if (err !== undefined) p.reject(err);
        else if (r.ok) p.resolve(r.value);
        else p.reject(r.value);
      });
    const fd = this.walFd;
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

  private endFlush(): void {
    this.flushing = false;
    this.markIdle();
    if (!this.closed) this.schedule();
  }

  /** Append to the audit trail; call inside the transition's transaction. */
  recordEvent(event: EventInput): void {
    this.insertEvent.run(...eventParams(this.now(), event));
  }

  async getMeta(key: string): Promise<string | undefined> {
    return (this.statement(GET_META_SQL).get(key) as { value: string } | undefined)?.value;
  }

  async setMeta(key: string, value: string): Promise<void> {
    this.statement(SET_META_SQL).run(...metaParams(key, value));
  }

  async pruneEvents(olderThanMs: number): Promise<number> {
    return this.maintain(PRUNE_EVENTS_SQL, this.now() - olderThanMs);
  }

  async schemaVersion(): Promise<number> {
    return this.db.pragma('user_version', { simple: true }) as number;
  }

  integrityCheck(): string[] {
    return (this.db.pragma('integrity_check') as { integrity_check: string }[]).map((r) => r.integrity_check);
  }

  /** Safe to call twice. Commits still waiting are written and made durable first. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.lingerTimer) clearTimeout(this.lingerTimer);
    this.lingerTimer = undefined;
    // A batch still running (its functions, or its fsync on the thread pool) settles first.
    while (this.flushing || this.syncing) await this.idle;
    while (this.pending.length > 0) await this.flush(true);
    if (this.walFd !== undefined) fs.closeSync(this.walFd);
    this.walFd = undefined;
    this.db.close();
    if (this.lockDb) {
      this.lockDb.close();
      fs.rmSync(`${this.path}.lock.pid`, { force: true });
    }
  }
}

function migrate(db: Db, journalPath: string): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  const known = MIGRATIONS.at(-1)?.version ?? 0;
  if (current > known) throw new JournalSchemaTooNewError(journalPath, current, known);
  for (const m of MIGRATIONS) {
    if (m.version <= current) continue;
    db.transaction(() => {
      db.exec(m.sql);
      db.pragma(`user_version = ${m.version}`);
    }).immediate();
  }
}

function acquireLock(journalPath: string): Db {
  const lockPath = `${journalPath}.lock`;
  const pidPath = `${lockPath}.pid`;
  ensurePrivateFile(lockPath);
  const lockDb = new Database(lockPath);
  lockDb.pragma('busy_timeout = 0');
  try {
    lockDb.exec('BEGIN EXCLUSIVE');
  } catch (err) {
    lockDb.close();
    if ((err as { code?: string }).code === 'SQLITE_BUSY') {
      const pid = Number.parseInt(readIfExists(pidPath) ?? '', 10);
      throw new JournalLockedError(journalPath, Number.isFinite(pid) ? pid : undefined);
    }
    throw err;
  }
  fs.writeFileSync(pidPath, `${process.pid}\n`);
  return lockDb;
}

/**
 * The journal holds file names, paths and parcel ids: 0600 whatever the umask (SQLite gives its
 * -wal and -shm files the database file's mode). A journal left readable by others is tightened.
 */
function ensurePrivateFile(file: string): void {
  try {
    const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, 0o600);
    try {
      fs.fchmodSync(fd, 0o600);
    } finally {
      fs.closeSync(fd);
    }
  } catch (err) {
    // Cannot create it: SQLite's own open fails next, with the error the start-up check explains.
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') return;
    const st = fs.lstatSync(file);
    if (st.isFile() && (st.mode & 0o077) !== 0 && st.uid === process.getuid?.()) fs.chmodSync(file, 0o600);
  }
}

function readIfExists(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}
