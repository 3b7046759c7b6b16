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
import { GridsyncError, scrubHeld } from '../errors/index.js';
import { MIGRATIONS } from './migrations.js';

export type Db = Database.Database;

/** Group commit: the longest a commit waits for others to share its transaction (only in a burst). */
const LINGER_MS = 4;
/** Commits that come faster than this arrive together (one loop turn) and share a transaction anyway. */
const MIN_GAP_MS = 0.05;
/** …and the most transitions one transaction takes before it is committed at once. */
const MAX_BATCH = 64;

export type Direction = 'in' | 'out' | 'daemon';

export interface OpenJournalOptions {
  /** Take the single-daemon lock (the daemon, `once`, `requeue`). Default true. */
  readonly lock?: boolean;
  /** Open read-only, no migrations, no lock (`status`). Default false. */
  readonly readonly?: boolean;
  /** Milliseconds since the epoch; injectable for tests. */
  readonly now?: () => number;
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

export interface CommitOptions {
  /**
   * The caller is one of many parallel workers and its next step can wait a few milliseconds: in
   * a burst the commit lingers (up to LINGER_MS) so that others share its transaction and fsync.
   * Each transaction costs ~0.3 ms of CPU here whatever it holds; the inbound pipeline's per-parcel
   * transitions use this, and halved the journal's share of a burst's CPU with it.
   */
  readonly linger?: boolean;
}

export interface EventInput {
  readonly direction: Direction;
  readonly mailboxId?: number | null;
  /** The item's key: the parcelId inbound, the outbound row id, or a daemon subject. */
  readonly item?: string | number | null;
  readonly from?: string | null;
  readonly to?: string | null;
  readonly detail?: Record<string, unknown> | null;
}

interface Pending {
  readonly fn: () => unknown;
  readonly resolve: (v: unknown) => void;
  readonly reject: (e: unknown) => void;
}

export class Journal {
  private closed = false;
  private readonly insertEvent: Database.Statement;
  private pending: Pending[] = [];
  private flushScheduled = false;
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

  private constructor(
    readonly db: Db,
    readonly path: string,
    readonly now: () => number,
    private readonly lockDb: Db | undefined,
  ) {
    this.insertEvent = db.prepare(
      'INSERT INTO events (at, direction, mailbox_id, item, from_state, to_state, detail) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
  }

  static open(journalPath: string, options: OpenJournalOptions = {}): Journal {
    const now = options.now ?? Date.now;
    if (options.readonly) {
      const db = new Database(journalPath, { readonly: true, fileMustExist: true });
      db.pragma('busy_timeout = 5000');
      return new Journal(db, journalPath, now, undefined);
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
      migrate(db);
      const journal = new Journal(db, journalPath, now, lockDb);
      // Prove now that the journal is writable (a file owned by another user opens read-only
      // without complaint), so the daemon fails at start-up instead of at its first transition.
      journal.setMeta('openedAt', new Date(now()).toISOString());
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
  commit<T>(fn: () => T, options: CommitOptions = {}): Promise<T> {
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
   * waiting may linger and a burst is on. While an fsync runs nothing starts: its end calls this.
   */
  private schedule(): void {
    if (this.syncing || this.pending.length === 0) return;
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
        this.flush();
      }, LINGER_MS);
    } else setImmediate(() => this.flush());
  }

  /**
   * Commits keep coming, one every few hundred microseconds: a commit that may linger then waits
   * up to LINGER_MS for others to share its transaction. (Commits that arrive within one loop turn
   * share one anyway; a lone commit never waits.)
   */
  private inBurst(): boolean {
    return this.arrivalGapMs >= MIN_GAP_MS && this.arrivalGapMs * 2 <= LINGER_MS;
  }

  private flush(syncNow = false): void {
    this.flushScheduled = false;
    if (this.lingerTimer) {
      clearTimeout(this.lingerTimer);
      this.lingerTimer = undefined;
    }
    const batch = this.pending;
    this.pending = [];
    this.pendingMayLinger = true;
    if (batch.length === 0) return;
    const results: { ok: boolean; value: unknown }[] = [];
    try {
      if (this.syncError !== undefined) throw this.syncError;
      this.db
        .transaction(() => {
          for (const p of batch) {
            try {
              results.push({ ok: true, value: this.db.transaction(p.fn)() });
            } catch (err) {
              results.push({ ok: false, value: err });
            }
          }
        })
        .immediate();
    } catch (err) {
      // The commit itself failed (disk full, closed): nothing of this batch is durable.
      for (const p of batch) p.reject(err);
      return;
    }
    const settle = (err: unknown): void =>
      batch.forEach((p, i) => {
        const r = results[i] as { ok: boolean; value: unknown };
        if (err !== undefined) p.reject(err);
        else if (r.ok) p.resolve(r.value);
        else p.reject(r.value);
      });
    const fd = this.walFd;
    if (fd === undefined || results.every((r) => !r.ok)) return settle(undefined); // nothing written
    if (syncNow) {
      try {
        fs.fsyncSync(fd);
      } catch (err) {
        this.syncError ??= err;
      }
      return settle(this.syncError);
    }
    this.syncing = true;
    fs.fsync(fd, (err) => {
      this.syncing = false;
      // After a failed fsync what reached the disk is unknown: no later commit may report success.
      if (err) this.syncError ??= err;
      settle(this.syncError);
      if (this.closed) this.closeWal();
      else this.schedule();
    });
  }

  private closeWal(): void {
    if (this.walFd === undefined || this.syncing) return;
    fs.closeSync(this.walFd);
    this.walFd = undefined;
  }

  /** Append to the audit trail; call inside the transition's transaction. */
  recordEvent(event: EventInput): void {
    this.insertEvent.run(
      this.now(),
      event.direction,
      event.mailboxId ?? null,
      event.item === undefined || event.item === null ? null : String(event.item),
      event.from ?? null,
      event.to ?? null,
      // Reasons may quote what the service said, secrets included.
      event.detail ? scrubHeld(JSON.stringify(event.detail)) : null,
    );
  }

  getMeta(key: string): string | undefined {
    const row = this.statement('SELECT value FROM meta WHERE key = ?').get(key) as { value: string } | undefined;
    return row?.value;
  }

  setMeta(key: string, value: string): void {
    this.statement('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(
      key,
      scrubHeld(value),
    );
  }

  /** Delete events older than `olderThanMs` (retention); rows are pruned by their own modules. */
  pruneEvents(olderThanMs: number): number {
    return this.db.prepare('DELETE FROM events WHERE at < ?').run(this.now() - olderThanMs).changes;
  }

  integrityCheck(): string[] {
    return (this.db.pragma('integrity_check') as { integrity_check: string }[]).map((r) => r.integrity_check);
  }

  /** Safe to call twice. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    // Commits still waiting are written and made durable now; an fsync still running on the
    // thread pool settles its own batch and closes the descriptor when it returns.
    this.flush(true);
    this.closeWal();
    this.db.close();
    if (this.lockDb) {
      this.lockDb.close();
      fs.rmSync(`${this.path}.lock.pid`, { force: true });
    }
  }
}

function migrate(db: Db): void {
  const current = db.pragma('user_version', { simple: true }) as number;
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
