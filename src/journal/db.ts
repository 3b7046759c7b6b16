/**
 * Opening the journal: pragmas on every open, migrations, the single-daemon lock, the event trail.
 *
 * Durability: WAL, and no commit reports success before the WAL is fsynced, so a committed
 * transition survives power loss. SQLite itself runs with synchronous=NORMAL (a commit writes its
 * WAL frames, no fsync); the journal fsyncs the WAL file itself: `transaction()` at once, on the
 * calling thread (what synchronous=FULL did), and `commit()` on libuv's thread pool, so the event
 * loop keeps working while the disk flushes, and every commit made while one fsync runs shares the
 * next (the batching is `group-commit.ts`). An fsync of the file covers every frame written before
 * it started, whichever descriptor wrote them; the WAL keeps its inode while a connection is open
 * (SQLite deletes it only when the last one closes). Checkpoints still fsync the WAL before copying
 * it into the database, and the database after. The pragmas are set on every open because a
 * reopened WAL database does not keep its synchronous setting. The journal must live on a local
 * disk, never on a network share.
 *
 * The lock (`sqlite-lock.ts`): one daemon per state directory. A second SQLite file
 * (`<journal>.lock`) is held in an open EXCLUSIVE transaction for the daemon's lifetime. SQLite's
 * POSIX locks die with the process, so a `kill -9` never leaves a stale lock behind, and a second
 * daemon is refused at once with the holder's pid. Read-only users (`gridsync status`) do not take
 * the lock.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { GroupCommit } from './group-commit.js';
import type { Lease } from './lease.js';
import { MIGRATIONS } from './migrations.js';
import { JournalSchemaTooNewError } from './schema-error.js';
import { acquireLock, ensurePrivateFile, releaseLock } from './sqlite-lock.js';
import {
  eventParams,
  GET_META_SQL,
  INSERT_EVENT_SQL,
  metaParams,
  EVENTS_BEFORE,
  pruneRows,
  SET_META_SQL,
  type CommitOptions,
  type EventInput,
  type JournalStore,
  type JournalTx,
  type Leases,
} from './store.js';

export type Db = Database.Database;

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

/** The WAL is cut back to this size after a checkpoint (bytes). */
const WAL_SIZE_LIMIT = 16 * 1024 * 1024;

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
    peers: () => Promise.resolve([owner]),
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
  private readonly statements = new Map<string, Database.Statement>();
  /** Descriptor of the WAL file, fsynced to make commits durable; undefined when read-only. */
  private walFd: number | undefined;
  private readonly batches: GroupCommit;
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
    this.batches = new GroupCommit({
      run: (sql) => void this.statement(sql).run(),
      inTransaction: () => this.db.inTransaction,
      tx: this.tx,
      walFd: () => this.walFd,
    });
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
      // A burst or a retention pass can grow the WAL by tens of MB; without a limit it keeps that
      // size for as long as the process lives (a checkpoint reuses it, never shrinks it).
      db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT}`);
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

  /** Group commit (`group-commit.ts`): resolves once the transaction `fn` shared with others is durable. */
  commit<T>(fn: (tx: JournalTx) => Promise<T>, options: CommitOptions = {}): Promise<T> {
    return this.batches.commit(fn, options);
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

  pruneEvents(olderThanMs: number): Promise<number> {
    return pruneRows(this, 'events', EVENTS_BEFORE, this.now() - olderThanMs);
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
    await this.batches.close();
    if (this.walFd !== undefined) fs.closeSync(this.walFd);
    this.walFd = undefined;
    this.db.close();
    if (this.lockDb) releaseLock(this.path, this.lockDb);
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
