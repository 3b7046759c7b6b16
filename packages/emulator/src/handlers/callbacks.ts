/** Callback handlers (8): registration, test, events and the delivery queue. docs/wire.md#records, docs/wire.md#callbacks. */
import { canSeeMailbox, canSeeNetwork, iso, objectNotFound, resolveMailbox, type Handler, type HandlerContext } from '../context.js';
import { post, type CallbackEventRow, type CallbackRow } from '../callbacks.js';
import type { UserRow } from '../store.js';
import { updateGiven } from './common.js';

const registration = (c: CallbackRow): Record<string, unknown> => ({
  callbackId: c.callback_id,
  url: c.url,
  event: c.event,
  mailboxId: c.mailbox_id,
  networkId: c.network_id ?? 0,
  httpAuthType: c.http_auth_type,
  status: c.status,
});

const eventInfo = (e: CallbackEventRow): Record<string, unknown> => ({
  callbackEventId: e.callback_event_id,
  callbackId: e.callback_id,
  event: e.event,
  mailboxId: e.mailbox_id,
  objectId: e.object_id,
  status: e.status,
  created: e.created,
  delivered: e.delivered,
  httpStatus: e.http_status,
});

function visibleCallback(ctx: HandlerContext, id: unknown): CallbackRow {
  const c = ctx.world.store.db.prepare('SELECT * FROM callbacks WHERE callback_id = ?').get(id) as CallbackRow | undefined;
  const caller = ctx.caller as UserRow;
  const visible = c && (c.mailbox_id !== null ? canSeeMailbox(ctx.world, caller, c.mailbox_id) : canSeeNetwork(caller, c.owner_network_id));
  if (!c || !visible) throw objectNotFound(`callback ${String(id)} not found`);
  return c;
}

function paging(ctx: HandlerContext): { pageNo: number; limit: number; offset: number } {
  const pageNo = (ctx.input.pageNo as number | undefined) ?? 1;
  const limit = (ctx.input.recordsPerPage as number | undefined) ?? 100;
  return { pageNo, limit, offset: (pageNo - 1) * limit };
}

function queueEntry(ctx: HandlerContext, c: CallbackRow): Record<string, unknown> {
  const last = ctx.world.store.db
    .prepare('SELECT * FROM callback_events WHERE callback_id = ? ORDER BY callback_event_id DESC LIMIT 1')
    .get(c.callback_id) as CallbackEventRow | undefined;
  return {
    callbackId: c.callback_id,
    url: c.url,
    event: c.event,
    mailboxId: c.mailbox_id,
    queuedAt: last?.created ?? null,
    lastAttempt: last?.last_attempt ?? null,
    attempts: last?.attempts ?? 0,
    status: last ? (last.status === 'Completed' ? 'Completed' : last.status === 'Error' ? 'Error' : 'Pending') : 'Active',
    lastHttpStatus: last?.http_status ?? null,
  };
}

export const callbackHandlers: Record<string, Handler> = {
  'callbacks.create': (ctx) => {
    const caller = ctx.caller as UserRow;
    const mailboxId = ctx.input.mailboxId === undefined ? null : resolveMailbox(ctx, ctx.input.mailboxId);
    const networkId = (ctx.input.networkId as number | undefined) ?? null;
    if (networkId !== null && !canSeeNetwork(caller, networkId)) throw objectNotFound(`network ${networkId} not found`);
    const id = ctx.world.store.nextId('callback', 600_001);
    ctx.world.store.db
      .prepare('INSERT INTO callbacks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')
      .run(
        id,
        ctx.input.url,
        ctx.input.event,
        mailboxId,
        networkId,
        (ctx.input.httpAuthType as string | undefined) ?? 'None',
        (ctx.input.username as string | undefined) ?? null,
        (ctx.input.password as string | undefined) ?? null,
        'Active',
        caller.network_id,
        iso(ctx.world.now()),
      );
    return { data: registration(visibleCallback(ctx, id)) };
  },
  'callbacks.update': (ctx) => {
    const c = visibleCallback(ctx, ctx.input.callbackId);
    updateGiven(ctx, 'callbacks', 'callback_id', c.callback_id, [
      ['url', 'url'],
      ['event', 'event'],
      ['status', 'status'],
      ['httpAuthType', 'http_auth_type'],
      ['username', 'username'],
      ['password', 'password'],
    ]);
    return { data: registration(visibleCallback(ctx, c.callback_id)) };
  },
  'callbacks.delete': (ctx) => {
    const c = visibleCallback(ctx, ctx.input.callbackId);
    ctx.world.store.db.prepare('DELETE FROM callbacks WHERE callback_id = ?').run(c.callback_id);
    return { data: true };
  },
  'callbacks.test': async (ctx) => {
    const c = visibleCallback(ctx, ctx.input.callbackId);
    const r = await post(c, JSON.stringify({ callbackId: c.callback_id, event: c.event, isTest: true, created: iso(ctx.world.now()) }));
    return { data: { callbackId: c.callback_id, url: c.url, httpStatus: r.status, responseBody: r.body, testedAt: iso(ctx.world.now()) } };
  },
  'callbacks.eventList': (ctx) => {
    const { pageNo, limit, offset } = paging(ctx);
    const rows = (ctx.world.store.db.prepare('SELECT * FROM callback_events ORDER BY callback_event_id').all() as CallbackEventRow[])
      .filter((e) => e.mailbox_id !== null && canSeeMailbox(ctx.world, ctx.caller as UserRow, e.mailbox_id))
      .filter(
        (e) =>
          (ctx.input.mailboxId === undefined || e.mailbox_id === ctx.input.mailboxId) &&
          (ctx.input.event === undefined || e.event === ctx.input.event),
      )
      .filter(
        (e) =>
          (ctx.input.beginDate === undefined || e.created_ms >= Date.parse(ctx.input.beginDate as string)) &&
          (ctx.input.endDate === undefined || e.created_ms <= Date.parse(ctx.input.endDate as string)),
      );
    return {
      data: { totalRecords: rows.length, pageNo, recordsPerPage: limit, events: rows.slice(offset, offset + limit).map(eventInfo) },
    };
  },
  'callbacks.getEventById': (ctx) => {
    const e = ctx.world.store.db.prepare('SELECT * FROM callback_events WHERE callback_event_id = ?').get(ctx.input.callbackEventId) as
      CallbackEventRow | undefined;
    if (!e || e.mailbox_id === null || !canSeeMailbox(ctx.world, ctx.caller as UserRow, e.mailbox_id))
      throw objectNotFound(`callback event ${String(ctx.input.callbackEventId)} not found`);
    return { data: { ...eventInfo(e), payload: e.payload, attempts: e.attempts, lastAttempt: e.last_attempt } };
  },
  'callbacks.queueList': (ctx) => {
    const { pageNo, limit, offset } = paging(ctx);
    const rows = (ctx.world.store.db.prepare('SELECT * FROM callbacks ORDER BY callback_id').all() as CallbackRow[])
      .filter((c) =>
        c.mailbox_id !== null
          ? canSeeMailbox(ctx.world, ctx.caller as UserRow, c.mailbox_id)
          : canSeeNetwork(ctx.caller as UserRow, c.owner_network_id),
      )
      .filter((c) => ctx.input.mailboxId === undefined || c.mailbox_id === ctx.input.mailboxId)
      .map((c) => queueEntry(ctx, c))
      .filter((q) => ctx.input.status === undefined || q.status === ctx.input.status);
    return { data: { totalRecords: rows.length, pageNo, recordsPerPage: limit, queueEntries: rows.slice(offset, offset + limit) } };
  },
  'callbacks.getQueueById': (ctx) => ({ data: queueEntry(ctx, visibleCallback(ctx, ctx.input.callbackId)) }),
};
