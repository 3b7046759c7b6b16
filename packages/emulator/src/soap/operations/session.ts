/** The session and key operations: log in and out, who the caller is, passwords and API keys. */
import { randomUUID } from 'node:crypto';
import { levelOf } from '../../context.js';
import { RET, fault } from '../fault.js';
import type { Caller } from '../sessions.js';
import { mayManage, me, num, ok, str, user, type OpContext, type Operation } from './context.js';

const VERSION = 'v4.1 (Build 472) emulator';

function sessionInfo(ctx: OpContext): Record<string, unknown> {
  const u = me(ctx);
  const s = ctx.caller?.session;
  return {
    GridOSVersion: VERSION,
    SessionID: s?.session_id ?? str(ctx.params.SessionID),
    SessionEventID: 0,
    UserID: u.user_id,
    LoginName: u.login,
    FirstName: u.first_name,
    LastName: u.last_name,
    EMail: u.email,
    TimeZoneOffset: 0,
    AuthLevel: levelOf(u),
    LastLogin: s?.created_ms ?? null,
    OpenSessions: ctx.sessions.openCount(u.user_id),
    TimeOut: Math.min(32_767, ctx.sessions.settings.timeoutS),
    NetworkID: u.network_id,
    MailboxID: u.mailbox_id,
    ip: ctx.ip,
  };
}

export const SESSION_OPERATIONS: Record<string, Operation> = {
  Login: (ctx) => {
    const name = ['LoginName', 'Email', 'UserName', 'UserID'].map((k) => ctx.raw.get(k)).find((v) => v !== undefined && v !== '') ?? '';
    return ok(ctx.sessions.login(name, str(ctx.params.Password), ctx.ip));
  },
  Logout: (ctx) => {
    ctx.sessions.logout(ctx.caller as Caller);
    return ok(0);
  },
  WhoAmI: (ctx) => ok(sessionInfo(ctx)),
  Version: () => ok(VERSION),
  NowUTC: (ctx) => ok(ctx.world.now()),
  SessionLog: (ctx) =>
    ok(ctx.sessions.recent(me(ctx).user_id, Math.max(1, num(ctx.params.MaxRecords) || 50)).map((s) => ctx.sessions.logInfo(s, me(ctx)))),
  SessionLogCurrent: (ctx) => {
    const s = ctx.caller?.session;
    const now = ctx.world.now();
    // An API key is a session that does not expire.
    return ok(
      s
        ? ctx.sessions.logInfo(s, me(ctx))
        : {
            SessionID: str(ctx.params.SessionID),
            StartTime: now,
            EndTime: null,
            Expires: null,
            NetworkID: me(ctx).network_id,
            MailboxID: me(ctx).mailbox_id,
            UserID: me(ctx).user_id,
            Status: 'Open',
            Version: '4.1',
          },
    );
  },
  ChangePassword: (ctx) => {
    if (me(ctx).password !== str(ctx.params.OldPassword)) throw fault(RET.AccessDenied, 'OldPassword does not match', 'OldPassword');
    if (str(ctx.params.NewPassword).length < 8) throw fault(RET.InvalidDataLength, 'NewPassword is too short (min=8)', 'NewPassword');
    ctx.world.store.db.prepare('UPDATE users SET password = ? WHERE user_id = ?').run(str(ctx.params.NewPassword), me(ctx).user_id);
    return ok(true);
  },
  GenerateAPIKey: (ctx) => {
    const u = user(ctx, ctx.params.UserID);
    mayManage(ctx, u);
    const key = randomUUID().toUpperCase();
    ctx.world.store.db.prepare('UPDATE users SET api_key = ? WHERE user_id = ?').run(key, u.user_id);
    return ok(key);
  },
  UserGetAPIKey: (ctx) => {
    const u = user(ctx, ctx.params.UserID);
    mayManage(ctx, u);
    if (!u.api_key) throw fault(RET.NotFound, `User ${u.user_id} has no API key`, 'UserID');
    return ok(u.api_key);
  },
};
