/**
 * The lease column of `gridsync status`: who holds each mailbox, with which fencing token, until
 * when. PostgreSQL: the lease rows, expiry on the database's clock. SQLite: the single-daemon lock
 * holds every mailbox for as long as the daemon runs, so the owner is that process.
 */
import type { LeaseRow } from '../journal/index.js';

export interface MailboxLease {
  /** The instance name; null when no instance holds it. */
  readonly owner: string | null;
  readonly token: number | null;
  /** ISO time (database clock); null with SQLite (held while the daemon runs). */
  readonly expiresAt: string | null;
  /** Unexpired on the database's clock (SQLite: the daemon runs). */
  readonly live: boolean;
}

export function mailboxLease(
  mailboxId: number | undefined,
  rows: readonly LeaseRow[],
  sqliteDaemon: { running: boolean; pid: number | null } | null,
): MailboxLease {
  if (sqliteDaemon)
    return sqliteDaemon.running
      ? { owner: `the running daemon (pid ${sqliteDaemon.pid ?? '?'})`, token: null, expiresAt: null, live: true }
      : { owner: null, token: null, expiresAt: null, live: false };
  const row = rows.find((r) => r.mailboxId === mailboxId);
  if (!row) return { owner: null, token: null, expiresAt: null, live: false };
  return { owner: row.owner, token: row.token, expiresAt: row.expiresAt.toISOString(), live: row.live };
}

/** One line of the text view. */
export function leaseLine(name: string, l: MailboxLease): string {
  const who = l.owner ?? 'nobody';
  const until = l.expiresAt ? `${l.expiresAt}${l.live ? '' : ' (expired: free to take over)'}` : l.live ? 'while it runs' : '-';
  return `  ${name.padEnd(14)} ${who.padEnd(28)} ${String(l.token ?? '-').padStart(16)}  ${until}`;
}
