/**
 * Handlers of the read side of the directory: users (me, get, list, by-name, key), networks,
 * mailboxes, grid IDs, partners, status lists, the report list. Writes live in one module per group.
 */
import {
  accessDenied,
  atLeast,
  canSeeMailbox,
  canSeeNetwork,
  duplicateObject,
  invalidParameter,
  iso,
  objectNotFound,
  resolveMailbox,
  type Handler,
  type HandlerContext,
} from '../context.js';
import { ParcelStatus } from '@gridsync/protocol/wire';
import type { GridIdRow, InterconnectRow, MailboxRow, NetworkRow, UserRow } from '../store.js';
import {
  callerOf as caller,
  gridInfo,
  interconnectInfo,
  mailboxInfo,
  networkInfo,
  paging,
  userInfo,
  visibleGrid as grid,
  visibleInterconnect,
  visibleUser as user,
} from './common.js';

const visibleUser = (ctx: HandlerContext, id: number): UserRow => user(ctx, id);
const visibleGrid = (ctx: HandlerContext, id: number): GridIdRow => grid(ctx, id);

/** The network of a mailbox the caller can see (undefined otherwise: the filter matches nothing). */
const owner = (ctx: HandlerContext, mailboxId: number): number | undefined =>
  canSeeMailbox(ctx.world, caller(ctx), mailboxId)
    ? (ctx.world.store.db.prepare('SELECT network_id FROM mailboxes WHERE mailbox_id = ?').get(mailboxId) as { network_id: number })
        .network_id
    : undefined;

const showStatus = (ctx: HandlerContext): [string, unknown[]] =>
  ctx.input.status === undefined ? ['', []] : [' AND status = ?', [ctx.input.status]];

export const directoryHandlers: Record<string, Handler> = {
  'users.me': (ctx) => ({ data: userInfo(caller(ctx)) }),
  'users.list': (ctx) => {
    const { limit, offset } = paging(ctx, 25);
    const rows = (ctx.world.store.db.prepare('SELECT * FROM users ORDER BY user_id').all() as UserRow[])
      .filter((u) => canSeeMailbox(ctx.world, caller(ctx), u.mailbox_id))
      .filter(
        (u) =>
          (ctx.input.mailboxId === undefined || u.mailbox_id === ctx.input.mailboxId) &&
          (ctx.input.networkId === undefined || u.network_id === ctx.input.networkId),
      )
      .filter((u) => ctx.input.authLevel === undefined || u.auth_level === ctx.input.authLevel)
      .filter((u) => ctx.input.status === undefined || u.status === ctx.input.status);
    return { data: rows.slice(offset, offset + limit).map(userInfo) };
  },
  'users.byName': (ctx) => {
    const rows = (ctx.world.store.db.prepare('SELECT * FROM users WHERE login = ?').all(ctx.input.login) as UserRow[]).filter((u) =>
      canSeeMailbox(ctx.world, caller(ctx), u.mailbox_id),
    );
    return { data: rows.map(userInfo) };
  },
  'users.key': (ctx) => {
    const u = visibleUser(ctx, ctx.input.userId as number);
    if (u.user_id !== caller(ctx).user_id && !atLeast(caller(ctx), 'NetworkAdmin'))
      throw accessDenied('reading another user’s API key needs NetworkAdmin or higher');
    if (!u.api_key) throw objectNotFound(`user ${u.user_id} has no API key`);
    return { data: u.api_key };
  },
  'networks.list': (ctx) => {
    const { pageNo, limit, offset } = paging(ctx, 25);
    const [st, args] = showStatus(ctx);
    const rows = (ctx.world.store.db.prepare(`SELECT * FROM networks WHERE 1 = 1${st} ORDER BY network_id`).all(...args) as NetworkRow[])
      .filter((n) => canSeeNetwork(caller(ctx), n.network_id))
      .filter((n) => !ctx.input.networkId || n.network_id === ctx.input.networkId)
      .filter((n) => !ctx.input.mailboxId || owner(ctx, ctx.input.mailboxId as number) === n.network_id);
    return {
      data: { totalRecords: rows.length, pageNo, recordsPerPage: limit, networks: rows.slice(offset, offset + limit).map(networkInfo) },
    };
  },
  'mailboxes.list': (ctx) => {
    const { pageNo, limit, offset } = paging(ctx, 25);
    const [st, args] = showStatus(ctx);
    const rows = (ctx.world.store.db.prepare(`SELECT * FROM mailboxes WHERE 1 = 1${st} ORDER BY mailbox_id`).all(...args) as MailboxRow[])
      .filter((m) => canSeeMailbox(ctx.world, caller(ctx), m.mailbox_id))
      .filter((m) => !ctx.input.networkId || m.network_id === ctx.input.networkId);
    return {
      data: { totalRecords: rows.length, pageNo, recordsPerPage: limit, mailboxes: rows.slice(offset, offset + limit).map(mailboxInfo) },
    };
  },
  'ids.find': (ctx) => {
    const g = ctx.world.store.gridIdByName(ctx.input.qualifier as string, ctx.input.id as string);
    return { data: g && canSeeMailbox(ctx.world, caller(ctx), g.mailbox_id) ? [gridInfo(g)] : [] };
  },
  'ids.list': (ctx) => {
    const { limit, offset } = paging(ctx, 25);
    const [st, args] = showStatus(ctx);
    const rows = (ctx.world.store.db.prepare(`SELECT * FROM grid_ids WHERE 1 = 1${st} ORDER BY grid_id`).all(...args) as GridIdRow[])
      .filter((g) => canSeeMailbox(ctx.world, caller(ctx), g.mailbox_id))
      .filter(
        (g) =>
          (ctx.input.mailboxId === undefined || g.mailbox_id === ctx.input.mailboxId) &&
          (ctx.input.networkId === undefined || g.network_id === ctx.input.networkId),
      );
    return { data: rows.slice(offset, offset + limit).map(gridInfo) };
  },
  'ids.create': (ctx) => {
    const mailboxId = resolveMailbox(ctx, ctx.input.mailboxId);
    const { store } = ctx.world;
    if (store.gridIdByName(ctx.input.qualifier as string, ctx.input.id as string))
      throw duplicateObject(`grid ID ${String(ctx.input.qualifier)}/${String(ctx.input.id)} already exists`);
    const mb = store.db.prepare('SELECT network_id FROM mailboxes WHERE mailbox_id = ?').get(mailboxId) as { network_id: number };
    const gridId = store.nextId('gridId', 6001);
    store.db
      .prepare('INSERT INTO grid_ids VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)')
      .run(
        gridId,
        mailboxId,
        mb.network_id,
        ctx.input.qualifier,
        ctx.input.id,
        (ctx.input.description as string | undefined) ?? null,
        'Active',
        (ctx.input.routingGroup as string | undefined) ?? 'ProductionA',
        (ctx.input.ediStandard as string | undefined) ?? 'X12',
      );
    return { data: gridInfo(store.gridId(gridId) as GridIdRow) };
  },
  'partners.get': (ctx) => ({ data: interconnectInfo(visibleInterconnect(ctx, ctx.input.interconnectId)) }),
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
    return {
      data: (
        ctx.world.store.db
          .prepare(`SELECT count(*) AS n FROM interconnects WHERE (grid_id_from = ? OR grid_id_to = ?)${st}`)
          .get(g.grid_id, g.grid_id, ...args) as { n: number }
      ).n,
    };
  },
  'partners.create': (ctx) => {
    const from = visibleGrid(ctx, ctx.input.gridIdFrom as number);
    const to = ctx.world.store.gridId(ctx.input.gridIdTo as number);
    if (!to) throw objectNotFound(`grid ID ${String(ctx.input.gridIdTo)} not found`);
    if (from.grid_id === to.grid_id) throw invalidParameter('gridIdTo: must differ from gridIdFrom');
    const { store } = ctx.world;
    const exists = store.db
      .prepare(
        "SELECT 1 FROM interconnects WHERE status <> 'Terminated' AND ((grid_id_from = ? AND grid_id_to = ?) OR (grid_id_from = ? AND grid_id_to = ?))",
      )
      .get(from.grid_id, to.grid_id, to.grid_id, from.grid_id);
    if (exists) throw duplicateObject(`an interconnect between ${from.grid_id} and ${to.grid_id} already exists`);
    const id = store.nextId('interconnect', 7101);
    const now = iso(ctx.world.now());
    store.db.prepare('INSERT INTO interconnects VALUES (?, ?, ?, ?, ?, ?)').run(id, from.grid_id, to.grid_id, 'Active', now, now);
    return { data: interconnectInfo(store.db.prepare('SELECT * FROM interconnects WHERE interconnect_id = ?').get(id) as InterconnectRow) };
  },
  'statusLists.get': () => ({
    data: {
      // The full vocabulary of the wire module, not the subset the service's own endpoint returns.
      parcelStatuses: ParcelStatus.options.map((code) => ({ code, description: code })),
      interchangeStatuses: ['Received', 'Delivered', 'Cancelled'].map((code) => ({ code, description: code })),
    },
  }),
};
