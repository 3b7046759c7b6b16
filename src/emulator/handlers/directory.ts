/**
 * Handlers of the directory groups the daemon and a developer touch: users (me, get, list,
 * by-name, key), networks, mailboxes, grid IDs, partners, status lists, the report list. The other
 * endpoints answer 400 "not implemented by the emulator" (see README, Emulator).
 */
import {
  accessDenied,
  atLeast,
  canSeeMailbox,
  canSeeNetwork,
  duplicateObject,
  invalidParameter,
  iso,
  levelOf,
  objectNotFound,
  resolveMailbox,
  type Handler,
  type HandlerContext,
} from '../context.js';
import type { GridIdRow, UserRow } from '../store.js';

interface NetworkRow { network_id: number; unique_id: string; company_name: string; status: string; created: string; modified: string }
interface MailboxRow extends NetworkRow { mailbox_id: number }
interface InterconnectRow { interconnect_id: number; grid_id_from: number; grid_id_to: number; status: string; created: string; modified: string }

const caller = (ctx: HandlerContext): UserRow => ctx.caller as UserRow;

const userInfo = (u: UserRow): Record<string, unknown> => ({
  userId: u.user_id, login: u.login, email: u.email, firstName: u.first_name, lastName: u.last_name,
  networkId: u.network_id, mailboxId: u.mailbox_id, authLevel: levelOf(u), status: u.status, created: u.created,
});
const networkInfo = (n: NetworkRow): Record<string, unknown> => ({
  networkId: n.network_id, uniqueId: n.unique_id, companyName: n.company_name, status: n.status, created: n.created, modified: n.modified,
});
const mailboxInfo = (m: MailboxRow): Record<string, unknown> => ({
  mailboxId: m.mailbox_id, networkId: m.network_id, uniqueId: m.unique_id, companyName: m.company_name, status: m.status, created: m.created, modified: m.modified,
});
const gridInfo = (g: GridIdRow): Record<string, unknown> => ({
  gridId: g.grid_id, mailboxId: g.mailbox_id, networkId: g.network_id, qualifier: g.qualifier, id: g.id, description: g.description,
  status: g.status, routingGroup: g.routing_group, ediStandard: g.edi_standard,
});
const interconnectInfo = (i: InterconnectRow): Record<string, unknown> => ({
  interconnectId: i.interconnect_id, gridIdFrom: i.grid_id_from, gridIdTo: i.grid_id_to, status: i.status, created: i.created, modified: i.modified,
});

function paging(ctx: HandlerContext, dflt: number): { pageNo: number; limit: number; offset: number } {
  const pageNo = (ctx.input.pageNo as number | undefined) ?? 1;
  const limit = (ctx.input.recordsPerPage as number | undefined) ?? dflt;
  return { pageNo, limit, offset: (pageNo - 1) * limit };
}

function visibleUser(ctx: HandlerContext, userId: number): UserRow {
  const u = ctx.world.store.user(userId);
  if (!u || !canSeeMailbox(ctx.world, caller(ctx), u.mailbox_id)) throw objectNotFound(`user ${userId} not found`);
  return u;
}

function visibleGrid(ctx: HandlerContext, gridId: number): GridIdRow {
  const g = ctx.world.store.gridId(gridId);
  if (!g || !canSeeMailbox(ctx.world, caller(ctx), g.mailbox_id)) throw objectNotFound(`grid ID ${gridId} not found`);
  return g;
}

const showStatus = (ctx: HandlerContext): [string, unknown[]] =>
  ctx.input.status === undefined ? ['', []] : [' AND status = ?', [ctx.input.status]];

export const directoryHandlers: Record<string, Handler> = {
  'users.me': (ctx) => ({ data: userInfo(caller(ctx)) }),
  'users.get': (ctx) => ({ data: userInfo(visibleUser(ctx, ctx.input.userId as number)) }),
  'users.list': (ctx) => {
    const { limit, offset } = paging(ctx, 25);
    const rows = (ctx.world.store.db.prepare('SELECT * FROM users ORDER BY user_id').all() as UserRow[])
      .filter((u) => canSeeMailbox(ctx.world, caller(ctx), u.mailbox_id))
      .filter((u) => (ctx.input.mailboxId === undefined || u.mailbox_id === ctx.input.mailboxId) && (ctx.input.networkId === undefined || u.network_id === ctx.input.networkId))
      .filter((u) => ctx.input.authLevel === undefined || u.auth_level === ctx.input.authLevel);
    return { data: rows.slice(offset, offset + limit).map(userInfo) };
  },
  'users.byName': (ctx) => {
    const rows = (ctx.world.store.db.prepare('SELECT * FROM users WHERE login = ?').all(ctx.input.login) as UserRow[]).filter((u) => canSeeMailbox(ctx.world, caller(ctx), u.mailbox_id));
    return { data: rows.map(userInfo) };
  },
  'users.key': (ctx) => {
    const u = visibleUser(ctx, ctx.input.userId as number);
    if (u.user_id !== caller(ctx).user_id && !atLeast(caller(ctx), 'NetworkAdmin')) throw accessDenied('reading another user’s API key needs NetworkAdmin or higher');
    if (!u.api_key) throw objectNotFound(`user ${u.user_id} has no API key`);
    return { data: u.api_key };
  },
  'networks.get': (ctx) => {
    const n = ctx.world.store.db.prepare('SELECT * FROM networks WHERE network_id = ?').get(ctx.input.networkId) as NetworkRow | undefined;
    if (!n || !canSeeNetwork(caller(ctx), n.network_id)) throw objectNotFound(`network ${String(ctx.input.networkId)} not found`);
    return { data: networkInfo(n) };
  },
  'networks.list': (ctx) => {
    const { pageNo, limit, offset } = paging(ctx, 25);
    const [st, args] = showStatus(ctx);
    const rows = (ctx.world.store.db.prepare(`SELECT * FROM networks WHERE 1 = 1${st} ORDER BY network_id`).all(...args) as NetworkRow[])
      .filter((n) => canSeeNetwork(caller(ctx), n.network_id))
      .filter((n) => !ctx.input.networkId || n.network_id === ctx.input.networkId);
    return { data: { totalRecords: rows.length, pageNo, recordsPerPage: limit, networks: rows.slice(offset, offset + limit).map(networkInfo) } };
  },
  'mailboxes.get': (ctx) => {
    const m = ctx.world.store.db.prepare('SELECT * FROM mailboxes WHERE mailbox_id = ?').get(ctx.input.mailboxId) as MailboxRow | undefined;
    if (!m || !canSeeMailbox(ctx.world, caller(ctx), m.mailbox_id)) throw objectNotFound(`mailbox ${String(ctx.input.mailboxId)} not found`);
    return { data: mailboxInfo(m) };
  },
  'mailboxes.list': (ctx) => {
    const { pageNo, limit, offset } = paging(ctx, 25);
    const [st, args] = showStatus(ctx);
    const rows = (ctx.world.store.db.prepare(`SELECT * FROM mailboxes WHERE 1 = 1${st} ORDER BY mailbox_id`).all(...args) as MailboxRow[])
      .filter((m) => canSeeMailbox(ctx.world, caller(ctx), m.mailbox_id))
      .filter((m) => !ctx.input.networkId || m.network_id === ctx.input.networkId);
    return { data: { totalRecords: rows.length, pageNo, recordsPerPage: limit, mailboxes: rows.slice(offset, offset + limit).map(mailboxInfo) } };
  },
  'ids.get': (ctx) => ({ data: gridInfo(visibleGrid(ctx, ctx.input.gridId as number)) }),
  'ids.find': (ctx) => {
    const g = ctx.world.store.gridIdByName(ctx.input.qualifier as string, ctx.input.id as string);
    return { data: g && canSeeMailbox(ctx.world, caller(ctx), g.mailbox_id) ? [gridInfo(g)] : [] };
  },
  'ids.list': (ctx) => {
    const { limit, offset } = paging(ctx, 25);
    const [st, args] = showStatus(ctx);
    const rows = (ctx.world.store.db.prepare(`SELECT * FROM grid_ids WHERE 1 = 1${st} ORDER BY grid_id`).all(...args) as GridIdRow[])
      .filter((g) => canSeeMailbox(ctx.world, caller(ctx), g.mailbox_id))
      .filter((g) => (ctx.input.mailboxId === undefined || g.mailbox_id === ctx.input.mailboxId) && (ctx.input.networkId === undefined || g.network_id === ctx.input.networkId));
    return { data: rows.slice(offset, offset + limit).map(gridInfo) };
  },
  'ids.create': (ctx) => {
    const mailboxId = resolveMailbox(ctx, ctx.input.mailboxId);
    const { store } = ctx.world;
    if (store.gridIdByName(ctx.input.qualifier as string, ctx.input.id as string)) throw duplicateObject(`grid ID ${String(ctx.input.qualifier)}/${String(ctx.input.id)} already exists`);
    const mb = store.db.prepare('SELECT network_id FROM mailboxes WHERE mailbox_id = ?').get(mailboxId) as { network_id: number };
    const gridId = store.nextId('gridId', 6001);
    store.db.prepare('INSERT INTO grid_ids VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)').run(
      gridId, mailboxId, mb.network_id, ctx.input.qualifier, ctx.input.id, (ctx.input.description as string | undefined) ?? null, 'Active',
      (ctx.input.routingGroup as string | undefined) ?? 'ProductionA', (ctx.input.ediStandard as string | undefined) ?? 'X12',
    );
    return { data: gridInfo(store.gridId(gridId) as GridIdRow) };
  },
  'partners.get': (ctx) => {
    const i = ctx.world.store.db.prepare('SELECT * FROM interconnects WHERE interconnect_id = ?').get(ctx.input.interconnectId) as InterconnectRow | undefined;
    if (!i) throw objectNotFound(`interconnect ${String(ctx.input.interconnectId)} not found`);
    visibleGrid(ctx, i.grid_id_from);
    return { data: interconnectInfo(i) };
  },
  'partners.list': (ctx) => {
    const g = visibleGrid(ctx, ctx.input.gridId as number);
    const { limit, offset } = paging(ctx, 25);
    const [st, args] = showStatus(ctx);
    const rows = ctx.world.store.db
      .prepare(`SELECT * FROM interconnects WHERE (grid_id_from = ? OR grid_id_to = ?)${st} ORDER BY interconnect_id LIMIT ? OFFSET ?`)
      .all(g.grid_id, g.grid_id, ...args, limit, offset) as InterconnectRow[];
    return { data: rows.map(interconnectInfo) };
  },
  'partners.count': (ctx) => {
    const g = visibleGrid(ctx, ctx.input.gridId as number);
    const [st, args] = showStatus(ctx);
    return { data: (ctx.world.store.db.prepare(`SELECT count(*) AS n FROM interconnects WHERE (grid_id_from = ? OR grid_id_to = ?)${st}`).get(g.grid_id, g.grid_id, ...args) as { n: number }).n };
  },
  'partners.create': (ctx) => {
    const from = visibleGrid(ctx, ctx.input.gridIdFrom as number);
    const to = ctx.world.store.gridId(ctx.input.gridIdTo as number);
    if (!to) throw objectNotFound(`grid ID ${String(ctx.input.gridIdTo)} not found`);
    if (from.grid_id === to.grid_id) throw invalidParameter('gridIdTo: must differ from gridIdFrom');
    const { store } = ctx.world;
    const exists = store.db.prepare('SELECT 1 FROM interconnects WHERE (grid_id_from = ? AND grid_id_to = ?) OR (grid_id_from = ? AND grid_id_to = ?)').get(from.grid_id, to.grid_id, to.grid_id, from.grid_id);
    if (exists) throw duplicateObject(`an interconnect between ${from.grid_id} and ${to.grid_id} already exists`);
    const id = store.nextId('interconnect', 7101);
    const now = iso(ctx.world.now());
    store.db.prepare('INSERT INTO interconnects VALUES (?, ?, ?, ?, ?, ?)').run(id, from.grid_id, to.grid_id, 'Active', now, now);
    return { data: interconnectInfo(store.db.prepare('SELECT * FROM interconnects WHERE interconnect_id = ?').get(id) as InterconnectRow) };
  },
  'statusLists.get': () => ({
    data: {
      parcelStatuses: ['InBoxReady', 'InBoxTransferred', 'InBoxArchived', 'outboxPending', 'outboxSent', 'outboxAcknowledged', 'outboxRetry', 'outboxFailed', 'outboxDeliveryError', 'outboxTransferred', 'OutBoxDelivered', 'Cancelled', 'VaultReady']
        .map((code) => ({ code, description: code })),
      interchangeStatuses: ['Received', 'Delivered', 'Cancelled'].map((code) => ({ code, description: code })),
    },
  }),
  'reports.list': (ctx) => ({
    data: [
      { reportId: 1, name: 'Monthly traffic', description: 'Parcels sent and received per week', active: true },
      { reportId: 2, name: 'Legacy daily', description: 'Retired', active: false },
    ].filter((r) => r.active || ctx.input.showInactive === 'true'),
  }),
};
