/**
 * User writes: create, update, delete, role, network/mailbox move, API key generation, passwords
 * (the composition rule is the request schema's), session reset, SMS (recorded, never sent) and
 * configuration. Nobody grants an AuthLevel above their own; acting on another user's key or
 * password needs NetworkAdmin.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { duplicateObject, invalidParameter, iso, type Handler, type HandlerContext } from '../context.js';
import type { UserRow } from '../store.js';
import {
  callerOf,
  configOf,
  newId,
  notAboveCaller,
  saveConfig,
  selfOrNetworkAdmin,
  updateGiven,
  userInfo,
  visibleMailbox,
  visibleNetwork,
  visibleUser,
} from './common.js';

export const newApiKey = (): string => `gk_${randomBytes(24).toString('base64url')}`;

function userDetail(ctx: HandlerContext, u: UserRow): Record<string, unknown> {
  return { ...userInfo(u), config: configOf(ctx, 'user', u.user_id) };
}

const target = (ctx: HandlerContext): UserRow => visibleUser(ctx, ctx.input.userId);

/** Another user's record can be changed by a MailboxAdmin and above; one's own by anyone. */
function mayEdit(ctx: HandlerContext, u: UserRow): void {
  const c = callerOf(ctx);
  if (u.user_id !== c.user_id) notAboveCaller(ctx, 'MailboxAdmin');
  // A user of a higher level than the caller is out of reach even when visible.
  notAboveCaller(ctx, u.auth_level);
}

/** Where a user lands: a mailbox (its network follows) or a network (the user's mailbox must be in it). */
function placement(ctx: HandlerContext, current: { network_id: number; mailbox_id: number }): { networkId: number; mailboxId: number } {
  const { networkId, mailboxId } = ctx.input as { networkId?: number; mailboxId?: number };
  if (mailboxId !== undefined && mailboxId !== 0) {
    const m = visibleMailbox(ctx, mailboxId);
    if (networkId !== undefined && networkId !== 0 && networkId !== m.network_id)
      throw invalidParameter(`mailboxId: mailbox ${m.mailbox_id} is not in network ${networkId}`);
    return { networkId: m.network_id, mailboxId: m.mailbox_id };
  }
  if (networkId !== undefined && networkId !== 0) {
    const n = visibleNetwork(ctx, networkId);
    const m = ctx.world.store.db.prepare('SELECT network_id FROM mailboxes WHERE mailbox_id = ?').get(current.mailbox_id) as
      { network_id: number } | undefined;
    if (!m || m.network_id !== n.network_id) throw invalidParameter(`mailboxId: required to move a user into network ${n.network_id}`);
    return { networkId: n.network_id, mailboxId: current.mailbox_id };
  }
  return { networkId: current.network_id, mailboxId: current.mailbox_id };
}

export const userHandlers: Record<string, Handler> = {
  'users.get': (ctx) => ({ data: userDetail(ctx, target(ctx)) }),
  'users.create': (ctx) => {
    const c = callerOf(ctx);
    const level = (ctx.input.authLevel as string | undefined) ?? 'MailboxUser';
    notAboveCaller(ctx, level);
    const where = placement(ctx, c);
    const { db } = ctx.world.store;
    if (db.prepare('SELECT 1 FROM users WHERE login = ? AND network_id = ?').get(ctx.input.login, where.networkId)) {
      throw duplicateObject(`login ${String(ctx.input.login)} already exists in network ${where.networkId}`);
    }
    const id = newId(ctx, 'users', 'user_id', 'user', 101);
    db.prepare('INSERT INTO users VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?)').run(
      id,
      ctx.input.login,
      ctx.input.email,
      (ctx.input.firstName as string | undefined) ?? null,
      (ctx.input.lastName as string | undefined) ?? null,
      ctx.input.password,
      level,
      where.networkId,
      where.mailboxId,
      'Active',
      iso(ctx.world.now()),
    );
    return { data: userDetail(ctx, visibleUser(ctx, id)) };
  },
  'users.update': (ctx) => {
    const u = target(ctx);
    mayEdit(ctx, u);
    updateGiven(ctx, 'users', 'user_id', u.user_id, [
      ['email', 'email'],
      ['firstName', 'first_name'],
      ['lastName', 'last_name'],
    ]);
    return { data: userDetail(ctx, target(ctx)) };
  },
  'users.delete': (ctx) => {
    const u = target(ctx);
    if (u.user_id === callerOf(ctx).user_id) throw invalidParameter('userId: a user cannot delete themself');
    mayEdit(ctx, u);
    const { db } = ctx.world.store;
    db.transaction(() => {
      db.prepare('DELETE FROM tokens WHERE user_id = ?').run(u.user_id);
      db.prepare('DELETE FROM api_keys WHERE user_id = ?').run(u.user_id);
      db.prepare('DELETE FROM users WHERE user_id = ?').run(u.user_id);
    })();
    return { data: true };
  },
  'users.role': (ctx) => {
    const u = target(ctx);
    mayEdit(ctx, u);
    notAboveCaller(ctx, ctx.input.authLevel as string);
    const where = placement(ctx, u);
    ctx.world.store.db
      .prepare('UPDATE users SET auth_level = ?, network_id = ?, mailbox_id = ? WHERE user_id = ?')
      .run(ctx.input.authLevel, where.networkId, where.mailboxId, u.user_id);
    return { data: userInfo(ctx.world.store.user(u.user_id) as UserRow) };
  },
  'users.setNetworkMailbox': (ctx) => {
    const u = target(ctx);
    mayEdit(ctx, u);
    if (ctx.input.networkId === undefined && ctx.input.mailboxId === undefined)
      throw invalidParameter('networkId, mailboxId: give at least one');
    const where = placement(ctx, u);
    ctx.world.store.db
      .prepare('UPDATE users SET network_id = ?, mailbox_id = ? WHERE user_id = ?')
      .run(where.networkId, where.mailboxId, u.user_id);
    return { data: userInfo(ctx.world.store.user(u.user_id) as UserRow) };
  },
  'users.keyGenerate': (ctx) => {
    const u = target(ctx);
    selfOrNetworkAdmin(ctx, u, 'generating the API key');
    notAboveCaller(ctx, u.auth_level);
    const key = newApiKey();
    ctx.world.store.db.prepare('UPDATE users SET api_key = ? WHERE user_id = ?').run(key, u.user_id);
    return { data: key };
  },
  'users.generatePassword': (ctx) => {
    const length = (ctx.input.length as number | undefined) ?? 12;
    const classes = ['abcdefghijkmnopqrstuvwxyz', 'ABCDEFGHJKLMNPQRSTUVWXYZ', '23456789', '!#$%&*+-=?@_'];
    const all = classes.join('');
    const chars = classes.map((c) => c[randomInt(c.length)] as string);
    while (chars.length < length) chars.push(all[randomInt(all.length)] as string);
    for (let i = chars.length - 1; i > 0; i--) {
      const j = randomInt(i + 1);
      [chars[i], chars[j]] = [chars[j] as string, chars[i] as string];
    }
    return { data: chars.join('') };
  },
  'users.password': (ctx) => {
    const u = target(ctx);
    selfOrNetworkAdmin(ctx, u, 'setting the password');
    notAboveCaller(ctx, u.auth_level);
    ctx.world.store.db.prepare('UPDATE users SET password = ? WHERE user_id = ?').run(ctx.input.newPassword, u.user_id);
    return { data: true };
  },
  'users.reset': (ctx) => {
    const u = target(ctx);
    mayEdit(ctx, u);
    ctx.world.store.db.prepare('UPDATE tokens SET alive = 0 WHERE user_id = ?').run(u.user_id);
    return { data: true };
  },
  'users.sendSms': (ctx) => {
    const u = target(ctx);
    if (u.user_id !== callerOf(ctx).user_id) notAboveCaller(ctx, 'MailboxAdmin');
    const text = ctx.input.message as string;
    if (text.length > 1600) throw invalidParameter('message: at most 1600 characters');
    const id = newId(ctx, 'sms', 'sms_id', 'sms', 1);
    ctx.world.store.db.prepare('INSERT INTO sms VALUES (?, ?, ?, ?)').run(id, u.user_id, text, iso(ctx.world.now()));
    return { data: true };
  },
  'users.updateConfig': (ctx) => {
    const u = target(ctx);
    mayEdit(ctx, u);
    saveConfig(ctx, 'user', u.user_id, 'userId');
    return { data: true };
  },
};
