/**
 * The SQLite journal's files on disk: the single-daemon lock (`<journal>.lock`, held in an open
 * EXCLUSIVE transaction for the daemon's lifetime, with the holder's pid beside it) and the
 * private mode of every file the journal creates. The reasoning is in `db.ts`.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import { GridsyncError } from '../errors/index.js';

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

/** Takes the lock of `journalPath` (refused at once, with the holder's pid, while another process holds it). */
export function acquireLock(journalPath: string): Database.Database {
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

/** Gives the lock of `journalPath` back (its connection from `acquireLock`). */
export function releaseLock(journalPath: string, lockDb: Database.Database): void {
  lockDb.close();
  fs.rmSync(`${journalPath}.lock.pid`, { force: true });
}

/**
 * The journal holds file names, paths and parcel ids: 0600 whatever the umask (SQLite gives its
 * -wal and -shm files the database file's mode). A journal left readable by others is tightened.
 */
export function ensurePrivateFile(file: string): void {
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
