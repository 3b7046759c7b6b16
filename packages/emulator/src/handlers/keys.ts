/**
 * API keys as records: created keys authenticate (X-API-Key) until deleted; the full key string is
 * in the create answer only, every later view masks it. A `Session` key lives as long as a bearer
 * token. Keys of another user need NetworkAdmin, as reading their key does.
 */
import { iso, objectNotFound, type Handler, type HandlerContext } from '../context.js';
import type { UserRow } from '../store.js';
import { newId, notAboveCaller, selfOrNetworkAdmin, visibleUser, type KeyRow } from './common.js';
import { newApiKey } from './users.js';

/** All but the last four characters hidden. */
export const maskKey = (key: string): string => `${'*'.repeat(Math.max(4, key.length - 4))}${key.slice(-4)}`;

const keyRecord = (k: KeyRow, full = false): Record<string, unknown> => ({
  keyId: k.key_id,
  userId: k.user_id,
  key: full ? k.key : maskKey(k.key),
  visibility: k.visibility,
  created: k.created,
});

function owner(ctx: HandlerContext, userId: unknown, what: string): UserRow {
  const u = visibleUser(ctx, userId);
  selfOrNetworkAdmin(ctx, u, what);
  notAboveCaller(ctx, u.auth_level);
  return u;
}

const liveKeys = (ctx: HandlerContext, userId: number): KeyRow[] =>
  (ctx.world.store.db.prepare('SELECT * FROM api_keys WHERE user_id = ? AND revoked = 0 ORDER BY key_id').all(userId) as KeyRow[]).filter(
    (k) => k.expires_at === null || k.expires_at > ctx.world.now(),
  );

export const keyHandlers: Record<string, Handler> = {
  'keys.create': (ctx) => {
    const u = owner(ctx, ctx.input.userId, 'creating an API key');
    const id = newId(ctx, 'api_keys', 'key_id', 'apiKey', 401);
    const now = ctx.world.now();
    const visibility = ctx.input.visibility as string;
    const expires = visibility === 'Session' ? now + ctx.world.settings.tokenLifetimeMs : null;
    ctx.world.store.db
      .prepare('INSERT INTO api_keys VALUES (?, ?, ?, ?, ?, ?, 0)')
      .run(id, u.user_id, newApiKey(), visibility, iso(now), expires);
    return { data: keyRecord(ctx.world.store.db.prepare('SELECT * FROM api_keys WHERE key_id = ?').get(id) as KeyRow, true) };
  },
  'keys.getKey': (ctx) => {
    const u = owner(ctx, ctx.input.userId, 'reading the API keys');
    const k = liveKeys(ctx, u.user_id).at(-1);
    if (!k) throw objectNotFound(`user ${u.user_id} has no API key record`);
    return { data: keyRecord(k) };
  },
  'keys.list': (ctx) => {
    const u = owner(ctx, ctx.input.userId, 'listing the API keys');
    return {
      data: liveKeys(ctx, u.user_id)
        .filter((k) => ctx.input.visibility === undefined || k.visibility === ctx.input.visibility)
        .map((k) => keyRecord(k)),
    };
  },
  'keys.delete': (ctx) => {
    const k = ctx.world.store.db.prepare('SELECT * FROM api_keys WHERE key_id = ? AND revoked = 0').get(ctx.input.keyId) as
      KeyRow | undefined;
    if (!k) throw objectNotFound(`API key ${String(ctx.input.keyId)} not found`);
    owner(ctx, k.user_id, 'deleting an API key');
    ctx.world.store.db.prepare('UPDATE api_keys SET revoked = 1 WHERE key_id = ?').run(k.key_id);
    return { data: true };
  },
};
