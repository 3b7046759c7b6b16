/**
 * What the directory handlers share: the row types of the directory tables, their wire views
 * (one function per record shape), paging, and the lookups that answer 404 for another tenant's
 * objects.
 */
import {
  accessDenied,
  atLeast,
  canSeeMailbox,
  canSeeNetwork,
  invalidParameter,
  levelOf,
  objectNotFound,
  type HandlerContext,
} from '../context.js';
import type { GridIdRow, InterconnectRow, MailboxRow, NetworkRow, UserRow } from '../store.js';

export interface CommRow {
  comm_id: number;
  mailbox_id: number;
  comm_type: string;
  identifier: string;
  status: string;
  use_type: string;
  private_key_required: number;
  created: string;
}
export interface CarbonCopyRow {
  cc_id: number;
  from_mailbox_id: number;
  to_mailbox_id: number;
  status: string;
  direction: string;
  created: string;
}
export interface KeyRow {
  key_id: number;
  user_id: number;
  key: string;
  visibility: string;
  created: string;
  expires_at: number | null;
  revoked: number;
}
export interface PortalRow {
  portal_id: number;
  mailbox_id: number;
  url: string;
  status: string;
  created: string;
}

export const callerOf = (ctx: HandlerContext): UserRow => ctx.caller as UserRow;

export const userInfo = (u: UserRow): Record<string, unknown> => ({
  userId: u.user_id,
  login: u.login,
  email: u.email,
  firstName: u.first_name,
  lastName: u.last_name,
  networkId: u.network_id,
  mailboxId: u.mailbox_id,
  authLevel: levelOf(u),
  status: u.status,
  created: u.created,
});
export const networkInfo = (n: NetworkRow): Record<string, unknown> => ({
  networkId: n.network_id,
  uniqueId: n.unique_id,
  companyName: n.company_name,
  status: n.status,
  created: n.created,
  modified: n.modified,
});
export const mailboxInfo = (m: MailboxRow): Record<string, unknown> => ({
  mailboxId: m.mailbox_id,
  networkId: m.network_id,
  uniqueId: m.unique_id,
  companyName: m.company_name,
  status: m.status,
  created: m.created,
  modified: m.modified,
});
export const gridInfo = (g: GridIdRow): Record<string, unknown> => ({
  gridId: g.grid_id,
  mailboxId: g.mailbox_id,
  networkId: g.network_id,
  qualifier: g.qualifier,
  id: g.id,
  description: g.description,
  status: g.status,
  routingGroup: g.routing_group,
  ediStandard: g.edi_standard,
});
export const interconnectInfo = (i: InterconnectRow): Record<string, unknown> => ({
  interconnectId: i.interconnect_id,
  gridIdFrom: i.grid_id_from,
  gridIdTo: i.grid_id_to,
  status: i.status,
  created: i.created,
  modified: i.modified,
});

/** Page bounds of a list request; the offset is capped so that no page number can overflow SQLite. */
export function paging(ctx: HandlerContext, dflt: number): { pageNo: number; limit: number; offset: number } {
  const pageNo = (ctx.input.pageNo as number | undefined) ?? 1;
  const limit = (ctx.input.recordsPerPage as number | undefined) ?? dflt;
  return { pageNo, limit, offset: Math.min((pageNo - 1) * limit, Number.MAX_SAFE_INTEGER) };
}

export function visibleNetwork(ctx: HandlerContext, networkId: unknown): NetworkRow {
  const n = ctx.world.store.db.prepare('SELECT * FROM networks WHERE network_id = ?').get(networkId) as NetworkRow | undefined;
  if (!n || !canSeeNetwork(callerOf(ctx), n.network_id)) throw objectNotFound(`network ${String(networkId)} not found`);
  return n;
}

export function visibleMailbox(ctx: HandlerContext, mailboxId: unknown): MailboxRow {
  const m = ctx.world.store.db.prepare('SELECT * FROM mailboxes WHERE mailbox_id = ?').get(mailboxId) as MailboxRow | undefined;
  if (!m || !canSeeMailbox(ctx.world, callerOf(ctx), m.mailbox_id)) throw objectNotFound(`mailbox ${String(mailboxId)} not found`);
  return m;
}

export function visibleUser(ctx: HandlerContext, userId: unknown): UserRow {
  const u = ctx.world.store.user(userId as number);
  if (!u || !canSeeMailbox(ctx.world, callerOf(ctx), u.mailbox_id)) throw objectNotFound(`user ${String(userId)} not found`);
  return u;
}

export function visibleGrid(ctx: HandlerContext, gridId: unknown): GridIdRow {
  const g = ctx.world.store.gridId(gridId as number);
  if (!g || !canSeeMailbox(ctx.world, callerOf(ctx), g.mailbox_id)) throw objectNotFound(`grid ID ${String(gridId)} not found`);
  return g;
}

export function visibleInterconnect(ctx: HandlerContext, interconnectId: unknown): InterconnectRow {
  const i = ctx.world.store.db.prepare('SELECT * FROM interconnects WHERE interconnect_id = ?').get(interconnectId) as
    InterconnectRow | undefined;
  const mine = (gridId: number): boolean => {
    const g = ctx.world.store.gridId(gridId);
    return g !== undefined && canSeeMailbox(ctx.world, callerOf(ctx), g.mailbox_id);
  };
  if (!i || !(mine(i.grid_id_from) || mine(i.grid_id_to))) throw objectNotFound(`interconnect ${String(interconnectId)} not found`);
  return i;
}

/** Acting on another user (their key, their password): the caller themself, or NetworkAdmin and above. */
export function selfOrNetworkAdmin(ctx: HandlerContext, target: UserRow, what: string): void {
  if (target.user_id !== callerOf(ctx).user_id && !atLeast(callerOf(ctx), 'NetworkAdmin'))
    throw accessDenied(`${what} of another user needs NetworkAdmin or higher`);
}

/** Nobody grants or holds more power than the caller has. */
export function notAboveCaller(ctx: HandlerContext, level: string): void {
  const caller = callerOf(ctx);
  if (!atLeast(caller, level as Parameters<typeof atLeast>[1])) throw accessDenied(`${levelOf(caller)} cannot give AuthLevel ${level}`);
}

/** A fresh id from a sequence that survives restarts, skipping ids a seed fixture already used. */
/** Sets each column whose request field is given (`[field, column]` pairs) on the row `key = id` of `table`. */
export function updateGiven(
  ctx: HandlerContext,
  table: string,
  key: string,
  id: number,
  cols: readonly (readonly [string, string])[],
): void {
  for (const [field, col] of cols) {
    if (ctx.input[field] !== undefined)
      ctx.world.store.db.prepare(`UPDATE ${table} SET ${col} = ? WHERE ${key} = ?`).run(ctx.input[field], id);
  }
}

export function newId(ctx: HandlerContext, table: string, column: string, sequence: string, start: number): number {
  const { store } = ctx.world;
  for (;;) {
    const id = store.nextId(sequence, start);
    if (!store.db.prepare(`SELECT 1 FROM ${table} WHERE ${column} = ?`).get(id)) return id;
  }
}

/** The three X12 delimiters must differ from each other, or no interchange could be parsed. */
export function delimiters(input: Record<string, unknown>): {
  elementDelimiter: string;
  subElementDelimiter: string;
  segmentTerminator: string;
} {
  const d = {
    elementDelimiter: input.elementDelimiter as string,
    subElementDelimiter: input.subElementDelimiter as string,
    segmentTerminator: input.segmentTerminator as string,
  };
  if (new Set(Object.values(d)).size !== 3)
    throw invalidParameter('elementDelimiter, subElementDelimiter, segmentTerminator: must be three different characters');
  if (Object.values(d).some((c) => /[A-Za-z0-9\s]/.test(c)))
    throw invalidParameter('delimiters: a letter, digit or white space cannot be a delimiter');
  return d;
}

/** Free-form configuration values of update-config requests: every field but the id, stored as given. */
export function saveConfig(ctx: HandlerContext, scope: string, scopeId: number, idField: string, reserved: readonly string[] = []): number {
  let n = 0;
  for (const [k, v] of Object.entries(ctx.input)) {
    if (k === idField || reserved.includes(k) || v === undefined) continue;
    if (k.length > 100) throw invalidParameter(`${k.slice(0, 40)}…: configuration key too long`);
    ctx.world.store.setSetting(scope, scopeId, `config.${k}`, v);
    n += 1;
  }
  return n;
}

/** The stored configuration of an object, for its single-record view. */
export function configOf(ctx: HandlerContext, scope: string, scopeId: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(ctx.world.store.settings(scope, scopeId))) {
    if (k.startsWith('config.')) out[k.slice(7)] = v;
  }
  return out;
}
