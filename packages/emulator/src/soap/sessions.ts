/**
 * SOAP sessions in the emulator's store: `Login` issues a GUID; a session expires after
 * `timeoutS` seconds without a call; a user holds at most `maxPerUser` open sessions; an API key
 * (the same keys the REST side accepts) is a session id that never expires and needs no Login.
 */
import { randomUUID } from 'node:crypto';
import type { World } from '../context.js';
import type { UserRow } from '../store.js';
import { RET, fault } from './fault.js';

export interface SoapSessionSettings {
  /** Idle seconds before a session expires (reported as SessionInfo.TimeOut). */
  readonly timeoutS: number;
  /** Open sessions per user; one more Login is refused. */
  readonly maxPerUser: number;
}

export interface SessionRow {
  session_id: string;
  user_id: number;
  created_ms: number;
  last_ms: number;
  status: 'Open' | 'Closed' | 'Expired';
  ip: string | null;
}

export interface Caller {
  readonly user: UserRow;
  /** Undefined when the caller used an API key. */
  readonly session?: SessionRow;
}

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export class SoapSessions {
  constructor(
    private readonly world: World,
    readonly settings: SoapSessionSettings,
  ) {
    world.store.db.exec(`CREATE TABLE IF NOT EXISTS soap_sessions (
      session_id TEXT PRIMARY KEY, user_id INTEGER NOT NULL, created_ms INTEGER NOT NULL, last_ms INTEGER NOT NULL,
      status TEXT NOT NULL, ip TEXT)`);
  }

  /** Marks idle sessions Expired (lazily, on each use). */
  private sweep(): void {
    this.world.store.db
      .prepare("UPDATE soap_sessions SET status = 'Expired' WHERE status = 'Open' AND last_ms < ?")
      .run(this.world.now() - this.settings.timeoutS * 1000);
  }

  openCount(userId: number): number {
    this.sweep();
    return (
      this.world.store.db.prepare("SELECT count(*) AS n FROM soap_sessions WHERE user_id = ? AND status = 'Open'").get(userId) as {
        n: number;
      }
    ).n;
  }

  login(nameOrEmail: string, password: string, ip: string | null): string {
    const db = this.world.store.db;
    const user = db
      .prepare("SELECT * FROM users WHERE (login = ? OR email = ? OR CAST(user_id AS TEXT) = ?) AND status = 'Active'")
      .get(nameOrEmail, nameOrEmail, nameOrEmail) as UserRow | undefined;
    if (!user || user.password === null || user.password !== password)
      throw fault(RET.AccessDenied, 'Invalid login name or password.', 'LoginName');
    if (this.openCount(user.user_id) >= this.settings.maxPerUser) {
      throw fault(
        RET.AccessDenied,
        `Too many open sessions (max=${this.settings.maxPerUser}): log out or wait for a session to expire.`,
        'SessionID',
      );
    }
    const id = randomUUID().toUpperCase();
    const now = this.world.now();
    db.prepare("INSERT INTO soap_sessions VALUES (?, ?, ?, ?, 'Open', ?)").run(id, user.user_id, now, now, ip);
    return id;
  }

  /** The caller behind a session id or API key; refreshes the session's idle timer. */
  authenticate(sessionId: unknown): Caller {
    const db = this.world.store.db;
    const id = typeof sessionId === 'string' ? sessionId.trim() : '';
    if (id === '') throw fault(RET.InvalidID, 'Invalid SessionID', 'SessionID');
    const keyUser = db.prepare("SELECT * FROM users WHERE api_key = ? AND status = 'Active'").get(id) as UserRow | undefined;
    if (keyUser) return { user: keyUser };
    if (!GUID.test(id)) throw fault(RET.InvalidID, 'Invalid SessionID', 'SessionID');
    this.sweep();
    const s = db.prepare('SELECT * FROM soap_sessions WHERE session_id = ? COLLATE NOCASE').get(id) as SessionRow | undefined;
    if (!s) throw fault(RET.InvalidID, 'Invalid SessionID', 'SessionID');
    if (s.status !== 'Open') throw fault(RET.SessionTimeout, s.status === 'Expired' ? 'Session timed out' : 'Session closed', 'SessionID');
    const user = this.world.store.user(s.user_id);
    if (!user || user.status !== 'Active') throw fault(RET.AccessDenied, 'The session’s user is not active', 'SessionID');
    const now = this.world.now();
    db.prepare('UPDATE soap_sessions SET last_ms = ? WHERE session_id = ?').run(now, s.session_id);
    return { user, session: { ...s, last_ms: now } };
  }

  logout(caller: Caller): void {
    if (caller.session)
      this.world.store.db.prepare("UPDATE soap_sessions SET status = 'Closed' WHERE session_id = ?").run(caller.session.session_id);
  }

  /** Fault injection: every open session expires now (the next call gets a SessionTimeout fault). */
  expireAll(): number {
    return this.world.store.db.prepare("UPDATE soap_sessions SET status = 'Expired' WHERE status = 'Open'").run().changes;
  }

  recent(userId: number, max: number): SessionRow[] {
    this.sweep();
    return this.world.store.db
      .prepare('SELECT * FROM soap_sessions WHERE user_id = ? ORDER BY created_ms DESC LIMIT ?')
      .all(userId, max) as SessionRow[];
  }

  /** SessionLogInfo of a session. */
  logInfo(s: SessionRow, user: UserRow): Record<string, unknown> {
    return {
      SessionID: s.session_id,
      StartTime: s.created_ms,
      EndTime: s.status === 'Open' ? null : s.last_ms,
      Expires: s.status === 'Open' ? s.last_ms + this.settings.timeoutS * 1000 : s.last_ms,
      NetworkID: user.network_id,
      MailboxID: user.mailbox_id,
      UserID: user.user_id,
      Status: s.status,
      Version: '4.1',
    };
  }
}
