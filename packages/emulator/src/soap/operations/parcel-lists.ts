/**
 * The parcel list operations: the pending inbox, the inbox and outbox archives, the outbox lists by
 * state and the search by mailbag control id — one query over the parcels table, filtered.
 */
import { collection, parcelRecord } from '../records.js';
import type { ParcelRow } from '../../store.js';
import { RET, fault } from '../fault.js';
import { mailboxesOf, me, num, ok, str, type OpContext, type OpResult, type Operation } from './context.js';

interface ParcelQuery {
  mailboxes: number[];
  direction: 'in' | 'out';
  statuses?: readonly string[];
  pending?: boolean;
  begin?: unknown;
  end?: unknown;
  gridFrom?: unknown;
  gridTo?: unknown;
  mailbag?: unknown;
}

function queryParcels(ctx: OpContext, q: ParcelQuery, pageNo: number, perPage: number): Record<string, unknown> {
  const where = [`mailbox_id IN (${q.mailboxes.map(() => '?').join(',') || 'NULL'})`, 'direction = ?'];
  const args: unknown[] = [...q.mailboxes, q.direction];
  if (q.pending) {
    where.push("status = 'InBoxReady'", '(hidden_until IS NULL OR hidden_until <= ?)');
    args.push(ctx.world.now());
  }
  if (q.statuses) {
    where.push(`status IN (${q.statuses.map(() => '?').join(',')})`);
    args.push(...q.statuses);
  }
  const dates: [unknown, string][] = [
    [q.begin, 'created_ms >= ?'],
    [q.end, 'created_ms <= ?'],
  ];
  for (const [v, clause] of dates) {
    if (typeof v === 'string') {
      where.push(clause);
      args.push(Date.parse(v));
    }
  }
  for (const [v, col] of [
    [q.gridFrom, 'grid_id_from'],
    [q.gridTo, 'grid_id_to'],
  ] as const) {
    if (num(v) !== 0) {
      where.push(`${col} = ?`);
      args.push(num(v));
    }
  }
  if (str(q.mailbag) !== '') {
    where.push('mailbag_control_id = ?');
    args.push(str(q.mailbag));
  }
  const db = ctx.world.store.db;
  const total = (db.prepare(`SELECT count(*) AS n FROM parcels WHERE ${where.join(' AND ')}`).get(...args) as { n: number }).n;
  const rows = db
    .prepare(`SELECT * FROM parcels WHERE ${where.join(' AND ')} ORDER BY parcel_id LIMIT ? OFFSET ?`)
    .all(...args, perPage, (pageNo - 1) * perPage) as ParcelRow[];
  return collection(ctx.world, ctx.ids, rows, total, pageNo, perPage);
}

function paging(ctx: OpContext): { pageNo: number; perPage: number } {
  const pageNo = num(ctx.params.PageNo) || 1;
  const perPage = num(ctx.params.RecordsPerPage) || 500;
  if (pageNo < 1) throw fault(RET.InvalidDataLength, 'PageNo must be 1 or more', 'PageNo');
  if (perPage < 1 || perPage > 500)
    throw fault(RET.InvalidDataLength, 'RecordsPerPage must be between 1 and 500 (max=500)', 'RecordsPerPage');
  return { pageNo, perPage };
}

// Outbound parcel states as the three outbox lists split them.
const OUT_DONE = ['OutBoxDelivered', 'outboxAcknowledged', 'outboxTransferred'];
const OUT_ERROR = ['outboxFailed', 'outboxDeliveryError', 'Cancelled'];
const OUT_IN_PROCESS = ['outboxPending', 'outboxSent', 'outboxRetry', 'as2Sent', 'ftpSent'];

/** The archives: every parcel of the direction (outbound: the delivered ones), filtered and paged. */
function archive(ctx: OpContext, mailboxId: unknown, direction: 'in' | 'out'): OpResult {
  const { pageNo, perPage } = paging(ctx);
  const p = ctx.params;
  return ok(
    queryParcels(
      ctx,
      {
        mailboxes: mailboxesOf(ctx, mailboxId),
        direction,
        statuses: direction === 'out' ? OUT_DONE : undefined,
        begin: p.BeginDate,
        end: p.EndDate,
        gridFrom: p.GridIDFrom,
        gridTo: p.GridIDTo,
        mailbag: p.MailbagControlID,
      },
      pageNo,
      perPage,
    ),
  );
}

const outboxErrors = (ctx: OpContext, mailboxes: number[]): OpResult =>
  ok(queryParcels(ctx, { mailboxes, direction: 'out', statuses: OUT_ERROR, begin: ctx.params.BeginDate, end: ctx.params.EndDate }, 1, 500));

const pendingInbox = (ctx: OpContext, mailboxId: unknown): OpResult =>
  ok(
    queryParcels(
      ctx,
      {
        mailboxes: mailboxesOf(ctx, mailboxId),
        direction: 'in',
        pending: true,
        gridFrom: ctx.params.GridIDFrom,
        gridTo: ctx.params.GridIDTo,
      },
      1,
      ctx.inboxCap,
    ),
  );

export const PARCEL_LIST_OPERATIONS: Record<string, Operation> = {
  ParcelInBox: (ctx) => pendingInbox(ctx, 0),
  ParcelInBoxEx: (ctx) => pendingInbox(ctx, ctx.params.MailboxID),
  ParcelInBoxExShort: (ctx) =>
    ok(
      queryParcels(
        ctx,
        {
          mailboxes: mailboxesOf(ctx, ctx.params.MailboxID),
          direction: 'in',
          statuses: [str(ctx.params.Status)],
          gridFrom: ctx.params.GridIDFrom,
          gridTo: ctx.params.GridIDTo,
        },
        1,
        ctx.inboxCap,
      ),
    ),
  ParcelInBoxArchive: (ctx) => archive(ctx, 0, 'in'),
  ParcelInBoxArchiveEx: (ctx) => archive(ctx, ctx.params.MailboxID, 'in'),
  ParcelOutBoxInProcess: (ctx) =>
    ok(queryParcels(ctx, { mailboxes: [me(ctx).mailbox_id], direction: 'out', statuses: OUT_IN_PROCESS }, 1, 500)),
  ParcelOutBoxInProcessEx: (ctx) =>
    ok(queryParcels(ctx, { mailboxes: mailboxesOf(ctx, ctx.params.MailboxID), direction: 'out', statuses: OUT_IN_PROCESS }, 1, 500)),
  ParcelOutBoxArchive: (ctx) => archive(ctx, 0, 'out'),
  ParcelOutBoxArchiveEx: (ctx) => archive(ctx, ctx.params.MailboxID, 'out'),
  ParcelOutBoxError: (ctx) => outboxErrors(ctx, [me(ctx).mailbox_id]),
  ParcelOutBoxErrorEx: (ctx) => outboxErrors(ctx, mailboxesOf(ctx, ctx.params.MailboxID)),
  ParcelFindMailbagControlID: (ctx) => {
    const mailboxes = mailboxesOf(ctx, ctx.params.MailboxID);
    const rows = ctx.world.store.db
      .prepare(
        `SELECT * FROM parcels WHERE mailbox_id IN (${mailboxes.map(() => '?').join(',') || 'NULL'}) AND mailbag_control_id = ? ORDER BY parcel_id`,
      )
      .all(...mailboxes, str(ctx.params.MailbagControlID)) as ParcelRow[];
    return ok(rows.map((p) => parcelRecord(ctx.world, ctx.ids, p)));
  },
};
