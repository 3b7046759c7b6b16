/** Auth handlers: login (login or email), refresh (token or refreshToken), logout, session, version, password. */
import { randomBytes } from 'node:crypto';
import { EmulatorError, invalidParameter, iso, levelOf, type Handler, type World } from '../context.js';
import type { UserRow } from '../store.js';

const newToken = (): string => randomBytes(24).toString('base64url');

function issue(world: World, userId: number): { token: string; refreshToken: string; expiresAt: string; userId: number } {
  const token = newToken();
  const refreshToken = newToken();
  const expiresAt = world.now() + world.settings.tokenLifetimeMs;
  world.store.db
    .prepare('INSERT INTO tokens (token, refresh_token, user_id, expires_at, alive) VALUES (?, ?, ?, ?, 1)')
    .run(token, refreshToken, userId, expiresAt);
  return { token, refreshToken, expiresAt: iso(expiresAt), userId };
}

const login: Handler = ({ world, input }) => {
  const name = (input.login ?? input.email) as string;
  const user = world.store.db.prepare("SELECT * FROM users WHERE (login = ? OR email = ?) AND status = 'Active'").get(name, name) as
    UserRow | undefined;
  if (!user || user.password === null || user.password !== input.password)
    throw new EmulatorError(401, 'InvalidSession', 'login or password is wrong');
  return { data: issue(world, user.user_id) };
};

const refresh: Handler = ({ world, input }) => {
  const presented = (input.refreshToken ?? input.token) as string;
  const row = world.store.db
    .prepare('SELECT * FROM tokens WHERE (token = ? OR refresh_token = ?) AND alive = 1')
    .get(presented, presented) as { token: string; user_id: number; expires_at: number } | undefined;
  if (!row || (row.token === presented && row.expires_at <= world.now()))
    throw new EmulatorError(401, 'InvalidSession', 'token is not valid');
  world.store.db.prepare('UPDATE tokens SET alive = 0 WHERE token = ?').run(row.token);
  return { data: issue(world, row.user_id) };
};

const logout: Handler = ({ world, req }) => {
  const bearer = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '')?.[1];
  if (bearer) world.store.db.prepare('UPDATE tokens SET alive = 0 WHERE token = ?').run(bearer);
  return { data: null, message: 'logged out' };
};

const session: Handler = ({ world, caller, req }) => {
  const u = caller as UserRow;
  const bearer = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '')?.[1];
  const t = bearer
    ? (world.store.db.prepare('SELECT expires_at FROM tokens WHERE token = ?').get(bearer) as { expires_at: number } | undefined)
    : undefined;
  return {
    data: {
      userId: u.user_id,
      login: u.login,
      networkId: u.network_id,
      mailboxId: u.mailbox_id,
      authLevel: levelOf(u),
      expiresAt: t ? iso(t.expires_at) : null,
    },
  };
};

const version: Handler = () => ({ data: { version: '2.6' } });

const changePassword: Handler = ({ world, caller, input }) => {
  const u = caller as UserRow;
  if (u.password !== input.currentPassword) throw invalidParameter('currentPassword: does not match');
  world.store.db.prepare('UPDATE users SET password = ? WHERE user_id = ?').run(input.newPassword, u.user_id);
  return { data: null, message: 'password changed' };
};

export const authHandlers: Record<string, Handler> = {
  'auth.login': login,
  'auth.refresh': refresh,
  'auth.logout': logout,
  'auth.session': session,
  'auth.version': version,
  'auth.changePassword': changePassword,
};
