/**
 * What each SOAP operation does, over the same store as the REST side (same users, keys,
 * mailboxes, parcels and ids; the parcel lifecycle functions are shared). An operation returns its
 * result value (written by the endpoint in the definition's element order) or a download to stream.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { typeDef, type OperationDef } from '../../api/soap/index.js';
import { atLeast, canSeeMailbox, canSeeNetwork, iso, levelOf, type World } from '../context.js';
import { confirmParcel, deliver, discardContent, routeOf, type StoredContent } from '../parcels.js';
import type { GridIdRow, ParcelRow, UserRow } from '../store.js';
import { RET, fault } from './fault.js';
import {
  collection,
  gridRecord,
  interchangeRecord,
  interconnectRecord,
  mailboxRecord,
  networkRecord,
  parcelRecord,
  userRecord,
  type InterchangeRow,
  type InterconnectRow,
  type MailboxRow,
  type NetworkRow,
  type ParcelIds,
} from './records.js';
import type { Caller, SoapSessions } from './sessions.js';

export interface OpContext {
  readonly world: World;
  readonly op: OperationDef;
  readonly params: Record<string, unknown>;
  /** The body element's children by name, for the lenient aliases (`Email` in place of `LoginName`). */
  readonly raw: ReadonlyMap<string, string>;
  readonly caller: Caller | null;
  readonly sessions: SoapSessions;
  readonly ids: ParcelIds;
  /** Decoded `Content`/`ContentBase64` of an upload, already in the content directory. */
  readonly content: StoredContent | undefined;
  readonly ip: string | null;
  /** Most parcels one ParcelInBox answer lists (the rest on the next call). */
  readonly inboxCap: number;
}

export type OpResult = { readonly result: unknown } | { readonly download: { readonly parcel: ParcelRow; readonly asString: boolean } };
export type Operation = (ctx: OpContext) => OpResult;

const me = (ctx: OpContext): UserRow => (ctx.caller as Caller).user;
const ok = (result: unknown): OpResult => ({ result });
const num = (v: unknown): number => (typeof v === 'number' ? v : Number(v ?? 0));
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

function requireLevel(ctx: OpContext, level: Parameters<typeof atLeast>[1]): void {
  if (!atLeast(me(ctx), level)) throw fault(RET.AccessDenied, `${ctx.op.name} needs ${level} or higher`, 'AuthLevel');
}

/** 0 = the session's mailbox; another tenant's mailbox is access denied (the service's `Ex` rule). */
function mailboxOf(ctx: OpContext, requested: unknown): number {
  const id = num(requested) === 0 ? me(ctx).mailbox_id : num(requested);
  const exists = ctx.world.store.db.prepare('SELECT 1 FROM mailboxes WHERE mailbox_id = ?').get(id) !== undefined;
  if (!exists) throw fault(RET.NotFound, `Mailbox ${id} not found`, 'MailboxID');
  if (!canSeeMailbox(ctx.world, me(ctx), id)) throw fault(RET.AccessDenied, `No authority over mailbox ${id}`, 'MailboxID');
  return id;
}

/** The mailboxes a list covers: one, or with `-1` every mailbox the caller may see. */
function mailboxesOf(ctx: OpContext, requested: unknown): number[] {
  if (num(requested) !== -1) return [mailboxOf(ctx, requested)];
  const all = ctx.world.store.db.prepare('SELECT mailbox_id FROM mailboxes ORDER BY mailbox_id').all() as { mailbox_id: number }[];
  return all.map((m) => m.mailbox_id).filter((id) => canSeeMailbox(ctx.world, me(ctx), id));
}

function parcelOf(ctx: OpContext, direction?: 'in' | 'out'): ParcelRow {
  const id = ctx.ids.in(ctx.params.ParcelID);
  const p = id < 0 ? undefined : ctx.world.store.parcel(id);
  if (!p || !canSeeMailbox(ctx.world, me(ctx), p.mailbox_id))
    throw fault(RET.NotFound, `Parcel ${String(ctx.params.ParcelID)} not found`, 'ParcelID');
  if (direction && p.direction !== direction) {
    throw fault(
      RET.DataError,
      `Parcel ${String(ctx.params.ParcelID)} is an ${p.direction === 'in' ? 'inbound' : 'outbound'} parcel`,
      'ParcelID',
    );
  }
  return p;
}

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

function inboxArchive(ctx: OpContext, mailboxId: unknown): OpResult {
  const { pageNo, perPage } = paging(ctx);
  const p = ctx.params;
  return ok(
    queryParcels(
      ctx,
      {
        mailboxes: mailboxesOf(ctx, mailboxId),
        direction: 'in',
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

function outboxArchive(ctx: OpContext, mailboxId: unknown): OpResult {
  const { pageNo, perPage } = paging(ctx);
  const p = ctx.params;
  return ok(
    queryParcels(
      ctx,
      {
        mailboxes: mailboxesOf(ctx, mailboxId),
        direction: 'out',
        statuses: OUT_DONE,
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

function download(asString: boolean, update: boolean): Operation {
  return (ctx) => {
    const p = parcelOf(ctx, 'in');
    const { world } = ctx;
    if (update && world.settings.legacyDownloadMode && p.status === 'InBoxReady') {
      world.store.db
        .prepare('UPDATE parcels SET hidden_until = ? WHERE parcel_id = ?')
        .run(world.now() + world.settings.redeliverAfterMs, p.parcel_id);
    }
    return { download: { parcel: p, asString } };
  };
}

/** The upload operations: the content is already stored; check it, route it, deliver it. */
function upload(kind: 'envelope' | 'mailbox' | 'partners', asString: boolean): Operation {
  return (ctx) => {
    const { world, params } = ctx;
    const content = ctx.content;
    try {
      const fileName = str(params.FileName);
      if (fileName.trim() === '') throw fault(RET.InvalidDataLength, 'FileName is empty', 'FileName');
      if (!content || content.bytes === 0)
        throw fault(RET.InvalidDataLength, 'No content (zero bytes)', asString ? 'ContentBase64' : 'Content');
      if (!asString && num(params.Bytes) !== content.bytes) {
        throw fault(RET.InvalidDataLength, `Bytes (${num(params.Bytes)}) does not match the content length (${content.bytes})`, 'Bytes');
      }
      let fromMailbox = me(ctx).mailbox_id;
      let gridFrom: number | undefined;
      let gridTo: number | undefined;
      if (kind === 'partners') {
        gridFrom = num(params.GridIDFrom) || undefined;
        gridTo = num(params.GridIDTo) || undefined;
        // The sender is the mailbox that owns GridIDFrom when the caller has authority over it (the session mailbox otherwise).
        const g = gridFrom !== undefined ? world.store.gridId(gridFrom) : undefined;
        if (g && canSeeMailbox(world, me(ctx), g.mailbox_id)) fromMailbox = g.mailbox_id;
      }
      const route = routeOf(world, content.head, gridFrom, gridTo);
      if (kind === 'mailbox') {
        const requested = num(params.MailboxID);
        if (requested === 0) {
          // MailboxID 0: the service picks the mailbox that owns the sender id of the envelope.
          const g = world.store.gridId(route.from);
          if (!g || !canSeeMailbox(world, me(ctx), g.mailbox_id))
            throw fault(RET.AccessDenied, `No authority over the sender id ${route.from}`, 'MailboxID');
          fromMailbox = g.mailbox_id;
        } else fromMailbox = mailboxOf(ctx, requested);
      }
      const { outParcelId } = deliver(world, { fromMailbox, fileName, content, gridIdFrom: route.from, gridIdTo: route.to });
      return ok(outParcelId);
    } catch (err) {
      discardContent(world, content);
      throw err;
    }
  };
}

function grid(ctx: OpContext, id: unknown, item = 'GridID'): GridIdRow {
  const g = ctx.world.store.gridId(num(id));
  if (!g) throw fault(RET.NotFound, `Trading partner id ${num(id)} not found`, item);
  return g;
}

function interchange(ctx: OpContext): InterchangeRow {
  const r = ctx.world.store.db.prepare('SELECT * FROM interchanges WHERE interchange_id = ?').get(Number(ctx.params.InterchangeID ?? 0)) as
    InterchangeRow | undefined;
  if (!r || !canSeeMailbox(ctx.world, me(ctx), r.mailbox_id))
    throw fault(RET.NotFound, `Interchange ${String(ctx.params.InterchangeID)} not found`, 'InterchangeID');
  return r;
}

function interchangeList(direction: 'in' | 'out'): Operation {
  return (ctx) => {
    const p = ctx.params;
    const where = ['mailbox_id = ?', 'direction = ?'];
    const args: unknown[] = [me(ctx).mailbox_id, direction];
    for (const [v, clause] of [
      [p.BeginDate, 'created_ms >= ?'],
      [p.EndDate, 'created_ms <= ?'],
    ] as const) {
      if (typeof v === 'string') {
        where.push(clause);
        args.push(Date.parse(v));
      }
    }
    if (str(p.InterchangeControlID) !== '') {
      where.push('control_number = ?');
      args.push(str(p.InterchangeControlID));
    }
    const rows = ctx.world.store.db
      .prepare(`SELECT * FROM interchanges WHERE ${where.join(' AND ')} ORDER BY interchange_id LIMIT 500`)
      .all(...args) as InterchangeRow[];
    return ok(rows.map((r) => interchangeRecord(ctx.world, r)));
  };
}

function user(ctx: OpContext, id: unknown): UserRow {
  const u = ctx.world.store.user(num(id) || me(ctx).user_id);
  if (!u || !canSeeMailbox(ctx.world, me(ctx), u.mailbox_id)) throw fault(RET.NotFound, `User ${num(id)} not found`, 'UserID');
  return u;
}

/** Reading or changing another user's key or details needs NetworkAdmin (MailboxAdmin within the own mailbox). */
function mayManage(ctx: OpContext, u: UserRow): void {
  const c = me(ctx);
  if (u.user_id === c.user_id || atLeast(c, 'NetworkAdmin') || (atLeast(c, 'MailboxAdmin') && u.mailbox_id === c.mailbox_id)) return;
  throw fault(RET.AccessDenied, `No authority over user ${u.user_id}`, 'UserID');
}

function interconnectRow(ctx: OpContext, id: number): InterconnectRow {
  const i = ctx.world.store.db.prepare('SELECT * FROM interconnects WHERE interconnect_id = ?').get(id) as InterconnectRow | undefined;
  const visible =
    i &&
    [i.grid_id_from, i.grid_id_to].some((g) => {
      const row = ctx.world.store.gridId(g);
      return row !== undefined && canSeeMailbox(ctx.world, me(ctx), row.mailbox_id);
    });
  if (!i || !visible) throw fault(RET.NotFound, `Interconnect ${id} not found`, 'InterconnectID');
  return i;
}

/** Every interconnect the caller may see (one end in a mailbox it can see), in id order. */
function visibleInterconnects(ctx: OpContext): InterconnectRow[] {
  const rows = ctx.world.store.db.prepare('SELECT * FROM interconnects ORDER BY interconnect_id').all() as InterconnectRow[];
  return rows.filter((i) => {
    try {
      interconnectRow(ctx, i.interconnect_id);
      return true;
    } catch {
      return false;
    }
  });
}

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

export const VERSION = 'v4.1 (Build 472) emulator';

const like = (s: unknown): string => `%${str(s)}%`;

export const OPERATIONS: Record<string, Operation> = {
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
  ParcelInBoxArchive: (ctx) => inboxArchive(ctx, 0),
  ParcelInBoxArchiveEx: (ctx) => inboxArchive(ctx, ctx.params.MailboxID),
  ParcelDownload: download(false, true),
  ParcelDownloadA: download(true, true),
  ParcelDownloadNoUpdate: download(false, false),
  ParcelDownloadNoUpdateA: download(true, false),
  ParcelDownloadConfirm: (ctx) => {
    confirmParcel(ctx.world, parcelOf(ctx, 'in'));
    return ok(true);
  },
  ParcelDownloadReset: (ctx) => {
    const p = parcelOf(ctx, 'in');
    ctx.world.store.db
      .prepare("UPDATE parcels SET status = 'InBoxReady', hidden_until = NULL, modified = ? WHERE parcel_id = ?")
      .run(iso(ctx.world.now()), p.parcel_id);
    return ok(true);
  },
  ParcelDownloadCancel: (ctx) => {
    const p = parcelOf(ctx, 'in');
    ctx.world.store.db
      .prepare("UPDATE parcels SET status = 'Cancelled', modified = ? WHERE parcel_id = ?")
      .run(iso(ctx.world.now()), p.parcel_id);
    return ok(true);
  },
  ParcelUpload: upload('envelope', false),
  ParcelUploadA: upload('envelope', true),
  ParcelUploadEx: upload('mailbox', false),
  ParcelUploadExA: upload('mailbox', true),
  ParcelUploadMft: upload('partners', false),
  ParcelUploadMftA: upload('partners', true),
  ParcelOutBoxInProcess: (ctx) =>
    ok(queryParcels(ctx, { mailboxes: [me(ctx).mailbox_id], direction: 'out', statuses: OUT_IN_PROCESS }, 1, 500)),
  ParcelOutBoxInProcessEx: (ctx) =>
    ok(queryParcels(ctx, { mailboxes: mailboxesOf(ctx, ctx.params.MailboxID), direction: 'out', statuses: OUT_IN_PROCESS }, 1, 500)),
  ParcelOutBoxArchive: (ctx) => outboxArchive(ctx, 0),
  ParcelOutBoxArchiveEx: (ctx) => outboxArchive(ctx, ctx.params.MailboxID),
  ParcelOutBoxError: (ctx) =>
    ok(
      queryParcels(
        ctx,
        { mailboxes: [me(ctx).mailbox_id], direction: 'out', statuses: OUT_ERROR, begin: ctx.params.BeginDate, end: ctx.params.EndDate },
        1,
        500,
      ),
    ),
  ParcelOutBoxErrorEx: (ctx) =>
    ok(
      queryParcels(
        ctx,
        {
          mailboxes: mailboxesOf(ctx, ctx.params.MailboxID),
          direction: 'out',
          statuses: OUT_ERROR,
          begin: ctx.params.BeginDate,
          end: ctx.params.EndDate,
        },
        1,
        500,
      ),
    ),
  ParcelInfo: (ctx) => ok(parcelRecord(ctx.world, ctx.ids, parcelOf(ctx))),
  ParcelManifest: (ctx) => {
    const p = parcelOf(ctx);
    const rows = ctx.world.store.db
      .prepare('SELECT * FROM interchanges WHERE parcel_id = ? ORDER BY interchange_id')
      .all(p.parcel_id) as InterchangeRow[];
    return ok(
      rows.map((r) => ({
        ManifestDate: r.created,
        NetworkID: p.network_id,
        Type: 'System',
        ParcelID: ctx.ids.out(p.parcel_id),
        InterchangeID: r.interchange_id,
        StatusCode: r.status,
        StatusMessage: `${r.standard} ${r.document_type ?? ''}`.trim(),
      })),
    );
  },
  ParcelResend: (ctx) => {
    requireLevel(ctx, 'NetOps');
    parcelOf(ctx, 'out');
    return ok(true);
  },
  ParcelSetMailbagControlID: (ctx) => {
    const p = parcelOf(ctx);
    ctx.world.store.db
      .prepare('UPDATE parcels SET mailbag_control_id = ? WHERE parcel_id = ?')
      .run(str(ctx.params.MailbagControlID), p.parcel_id);
    return ok(true);
  },
  ParcelFindMailbagControlID: (ctx) => {
    const mailboxes = mailboxesOf(ctx, ctx.params.MailboxID);
    const rows = ctx.world.store.db
      .prepare(
        `SELECT * FROM parcels WHERE mailbox_id IN (${mailboxes.map(() => '?').join(',') || 'NULL'}) AND mailbag_control_id = ? ORDER BY parcel_id`,
      )
      .all(...mailboxes, str(ctx.params.MailbagControlID)) as ParcelRow[];
    return ok(rows.map((p) => parcelRecord(ctx.world, ctx.ids, p)));
  },

  NetworkInfo: (ctx) => {
    const n = ctx.world.store.db
      .prepare('SELECT * FROM networks WHERE network_id = ?')
      .get(num(ctx.params.NetworkID) || me(ctx).network_id) as NetworkRow | undefined;
    if (!n || !canSeeNetwork(me(ctx), n.network_id))
      throw fault(RET.NotFound, `Network ${num(ctx.params.NetworkID)} not found`, 'NetworkID');
    return ok(networkRecord(n));
  },
  NetworkList: (ctx) => {
    const rows = ctx.world.store.db
      .prepare('SELECT * FROM networks WHERE company_name LIKE ? ORDER BY network_id')
      .all(like(ctx.params.Name)) as NetworkRow[];
    return ok(rows.filter((n) => canSeeNetwork(me(ctx), n.network_id)).map(networkRecord));
  },
  NetworkUpdate: (ctx) => {
    requireLevel(ctx, 'NetworkAdmin');
    const id = num(ctx.params.NetworkID) || me(ctx).network_id;
    if (!canSeeNetwork(me(ctx), id)) throw fault(RET.NotFound, `Network ${id} not found`, 'NetworkID');
    if (str(ctx.params.Name).trim() === '') throw fault(RET.InvalidDataLength, 'Name is empty', 'Name');
    const now = iso(ctx.world.now());
    const changed = ctx.world.store.db
      .prepare('UPDATE networks SET company_name = ?, modified = ? WHERE network_id = ?')
      .run(str(ctx.params.Name), now, id).changes;
    if (changed === 0) throw fault(RET.NotFound, `Network ${id} not found`, 'NetworkID');
    return ok(true);
  },
  MailboxInfo: (ctx) => {
    const id = num(ctx.params.MailboxID) || me(ctx).mailbox_id;
    const m = ctx.world.store.db.prepare('SELECT * FROM mailboxes WHERE mailbox_id = ?').get(id) as MailboxRow | undefined;
    if (!m || !canSeeMailbox(ctx.world, me(ctx), id)) throw fault(RET.NotFound, `Mailbox ${id} not found`, 'MailboxID');
    return ok(mailboxRecord(m));
  },
  MailboxList: (ctx) => {
    const rows = ctx.world.store.db
      .prepare('SELECT * FROM mailboxes WHERE company_name LIKE ? ORDER BY mailbox_id')
      .all(like(ctx.params.Name)) as MailboxRow[];
    return ok(rows.filter((m) => canSeeMailbox(ctx.world, me(ctx), m.mailbox_id)).map(mailboxRecord));
  },
  MailboxAdd: (ctx) => {
    requireLevel(ctx, 'NetworkAdmin');
    const name = str(ctx.params.Name).trim();
    if (name === '') throw fault(RET.InvalidDataLength, 'Name is empty', 'Name');
    const db = ctx.world.store.db;
    const id = ((db.prepare('SELECT max(mailbox_id) AS m FROM mailboxes').get() as { m: number | null }).m ?? 1000) + 1;
    const now = iso(ctx.world.now());
    db.prepare("INSERT INTO mailboxes VALUES (?, ?, ?, ?, 'Active', 0, ?, ?)").run(
      id,
      me(ctx).network_id,
      name.replace(/\W/g, '').slice(0, 12).toUpperCase() || `MB${id}`,
      name,
      now,
      now,
    );
    return ok(id);
  },

  TPInfo: (ctx) => {
    const g = grid(ctx, ctx.params.GridID);
    if (!canSeeMailbox(ctx.world, me(ctx), g.mailbox_id)) throw fault(RET.NotFound, `Trading partner id ${g.grid_id} not found`, 'GridID');
    return ok(gridRecord(ctx.world, g));
  },
  TPList: (ctx) => {
    const rows = ctx.world.store.db.prepare('SELECT * FROM grid_ids ORDER BY grid_id').all() as GridIdRow[];
    return ok(
      rows
        .filter((g) => canSeeMailbox(ctx.world, me(ctx), g.mailbox_id) && (ctx.params.ShowInactive === true || g.status === 'Active'))
        .map((g) => gridRecord(ctx.world, g)),
    );
  },
  TPAdd: (ctx) => {
    requireLevel(ctx, 'MailboxAdmin');
    const q = str(ctx.params.Qualifier).trim();
    const id = str(ctx.params.ID).trim();
    if (q === '' || q.length > 4) throw fault(RET.InvalidDataLength, 'Qualifier must be 1 to 4 characters (max=4)', 'Qualifier');
    if (id === '' || id.length > 35) throw fault(RET.InvalidDataLength, 'ID must be 1 to 35 characters (max=35)', 'ID');
    if (ctx.world.store.gridIdByName(q, id)) throw fault(RET.IDExistsOnNetwork, `${q}/${id} already exists`, 'ID');
    const db = ctx.world.store.db;
    const gridId = ((db.prepare('SELECT max(grid_id) AS m FROM grid_ids').get() as { m: number | null }).m ?? 5000) + 1;
    db.prepare("INSERT INTO grid_ids VALUES (?, ?, ?, ?, ?, ?, 'Active', 'ProductionA', 'X12')").run(
      gridId,
      me(ctx).mailbox_id,
      me(ctx).network_id,
      q,
      id,
      str(ctx.params.Description) || null,
    );
    return ok(gridId);
  },
  TPSearch: (ctx) => {
    const rows = ctx.world.store.db
      .prepare('SELECT * FROM grid_ids WHERE qualifier LIKE ? AND id LIKE ? ORDER BY grid_id')
      .all(str(ctx.params.Qualifier) || '%', like(ctx.params.ID)) as GridIdRow[];
    return ok(rows.filter((g) => ctx.params.ShowInactive === true || g.status === 'Active').map((g) => gridRecord(ctx.world, g)));
  },
  TPMove: (ctx) => {
    requireLevel(ctx, 'NetworkAdmin');
    const g = grid(ctx, ctx.params.GridID);
    if (!canSeeMailbox(ctx.world, me(ctx), g.mailbox_id)) throw fault(RET.NotFound, `Trading partner id ${g.grid_id} not found`, 'GridID');
    ctx.world.store.db
      .prepare('UPDATE grid_ids SET mailbox_id = ?, network_id = ? WHERE grid_id = ?')
      .run(me(ctx).mailbox_id, me(ctx).network_id, g.grid_id);
    return ok(g.grid_id);
  },

  InterconnectInfo: (ctx) => ok(interconnectRecord(interconnectRow(ctx, num(ctx.params.InterconnectID)))),
  InterconnectAdd: (ctx) => {
    const a = grid(ctx, ctx.params.GridID1, 'GridID1');
    const b = grid(ctx, ctx.params.GridID2, 'GridID2');
    if (!canSeeMailbox(ctx.world, me(ctx), a.mailbox_id))
      throw fault(RET.AccessDenied, `No authority over trading partner id ${a.grid_id}`, 'GridID1');
    const db = ctx.world.store.db;
    const existing = db
      .prepare(
        "SELECT 1 FROM interconnects WHERE status != 'Cancelled' AND ((grid_id_from = ? AND grid_id_to = ?) OR (grid_id_from = ? AND grid_id_to = ?))",
      )
      .get(a.grid_id, b.grid_id, b.grid_id, a.grid_id);
    if (existing) throw fault(RET.Duplicate, `An interconnect between ${a.grid_id} and ${b.grid_id} exists`, 'GridID2');
    const id = ((db.prepare('SELECT max(interconnect_id) AS m FROM interconnects').get() as { m: number | null }).m ?? 7000) + 1;
    const now = iso(ctx.world.now());
    db.prepare('INSERT INTO interconnects VALUES (?, ?, ?, ?, ?, ?)').run(
      id,
      a.grid_id,
      b.grid_id,
      ctx.params.Preconfirm === true ? 'Active' : 'Pending',
      now,
      now,
    );
    return ok(interconnectRecord(interconnectRow(ctx, id)));
  },
  InterconnectListByGridID: (ctx) => {
    const g1 = num(ctx.params.GridID1);
    const g2 = num(ctx.params.GridID2);
    const match = (i: InterconnectRow): boolean => {
      const ends = [i.grid_id_from, i.grid_id_to];
      return (g1 === 0 || ends.includes(g1)) && (g2 === 0 || ends.includes(g2));
    };
    return ok(visibleInterconnects(ctx).filter(match).map(interconnectRecord));
  },
  InterconnectListByStatus: (ctx) => {
    const g = num(ctx.params.GridID);
    return ok(
      visibleInterconnects(ctx)
        .filter((i) => interconnectRecord(i).Status === str(ctx.params.Status) && (g === 0 || i.grid_id_from === g || i.grid_id_to === g))
        .map(interconnectRecord),
    );
  },
  InterconnectCount: (ctx) => {
    const g = grid(ctx, ctx.params.GridID);
    if (!canSeeMailbox(ctx.world, me(ctx), g.mailbox_id)) throw fault(RET.NotFound, `Trading partner id ${g.grid_id} not found`, 'GridID');
    // Status is a plain string so that an omitted one means "any" (an enum's zero would be Pending).
    const status = str(ctx.params.Status);
    const known = typeDef('StatusInterconnect');
    if (status !== '' && known.kind === 'enum' && !known.values.includes(status))
      throw fault(RET.InvalidDataType, `Status ${status} is not one of ${known.values.join(', ')}`, 'Status');
    const ofGrid = (i: InterconnectRow): boolean => i.grid_id_from === g.grid_id || i.grid_id_to === g.grid_id;
    return ok(visibleInterconnects(ctx).filter((i) => ofGrid(i) && (status === '' || interconnectRecord(i).Status === status)).length);
  },
  InterconnectCancel: (ctx) => {
    const i = interconnectRow(ctx, num(ctx.params.InterconnectID));
    ctx.world.store.db
      .prepare("UPDATE interconnects SET status = 'Cancelled', modified = ? WHERE interconnect_id = ?")
      .run(iso(ctx.world.now()), i.interconnect_id);
    return ok(true);
  },

  InterchangeInBox: interchangeList('in'),
  InterchangeOutBox: interchangeList('out'),
  InterchangeInfo: (ctx) => ok(interchangeRecord(ctx.world, interchange(ctx))),
  InterchangeResend: (ctx) => {
    const r = interchange(ctx);
    return ok({ InterchangeID: r.interchange_id, StatusCode: r.status, StatusMessage: 'Resent' });
  },
  InterchangeCancel: (ctx) => {
    const r = interchange(ctx);
    if (r.status === 'Delivered') throw fault(RET.DataError, `Interchange ${r.interchange_id} is already delivered`, 'InterchangeID');
    ctx.world.store.db.prepare("UPDATE interchanges SET status = 'Cancelled' WHERE interchange_id = ?").run(r.interchange_id);
    return ok(true);
  },

  UserInfo: (ctx) => ok(userRecord(user(ctx, ctx.params.UserID))),
  UserList: (ctx) => {
    const rows = ctx.world.store.db
      .prepare('SELECT * FROM users WHERE login LIKE ? ORDER BY user_id')
      .all(like(ctx.params.Name)) as UserRow[];
    return ok(rows.filter((u) => canSeeMailbox(ctx.world, me(ctx), u.mailbox_id)).map(userRecord));
  },
  UserAdd: (ctx) => {
    requireLevel(ctx, 'MailboxAdmin');
    const p = ctx.params;
    const mailboxId = mailboxOf(ctx, p.MailboxID);
    const login = str(p.LoginName).trim();
    if (login === '') throw fault(RET.InvalidDataLength, 'LoginName is empty', 'LoginName');
    const db = ctx.world.store.db;
    if (db.prepare('SELECT 1 FROM users WHERE login = ?').get(login)) throw fault(RET.Duplicate, `LoginName ${login} exists`, 'LoginName');
    const level = str(p.AuthLevel) === 'NoChange' ? 'MailboxUser' : str(p.AuthLevel);
    if (!atLeast(me(ctx), level as Parameters<typeof atLeast>[1])) throw fault(RET.AccessDenied, `Cannot grant ${level}`, 'AuthLevel');
    const mb = db.prepare('SELECT network_id FROM mailboxes WHERE mailbox_id = ?').get(mailboxId) as { network_id: number };
    const id = ((db.prepare('SELECT max(user_id) AS m FROM users').get() as { m: number | null }).m ?? 0) + 1;
    db.prepare("INSERT INTO users VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, 'Active', ?)").run(
      id,
      login,
      str(p.EMail) || null,
      str(p.FirstName) || null,
      str(p.LastName) || null,
      str(p.Password) || null,
      level,
      mb.network_id,
      mailboxId,
      iso(ctx.world.now()),
    );
    return ok(id);
  },
  UserUpdate: (ctx) => {
    const u = user(ctx, ctx.params.UserID);
    mayManage(ctx, u);
    const p = ctx.params;
    const level = str(p.AuthLevel) === 'NoChange' ? u.auth_level : str(p.AuthLevel);
    if (level !== u.auth_level && !atLeast(me(ctx), level as Parameters<typeof atLeast>[1]))
      throw fault(RET.AccessDenied, `Cannot grant ${level}`, 'AuthLevel');
    ctx.world.store.db
      .prepare('UPDATE users SET first_name = ?, last_name = ?, email = ?, auth_level = ? WHERE user_id = ?')
      .run(str(p.FirstName) || u.first_name, str(p.LastName) || u.last_name, str(p.EMail) || u.email, level, u.user_id);
    return ok(true);
  },
  UserSetAuthLevel: (ctx) => {
    requireLevel(ctx, 'MailboxAdmin');
    const u = user(ctx, ctx.params.UserID);
    mayManage(ctx, u);
    const level = str(ctx.params.AuthLevel);
    if (level === 'NoChange') return ok(true);
    if (!atLeast(me(ctx), level as Parameters<typeof atLeast>[1])) throw fault(RET.AccessDenied, `Cannot grant ${level}`, 'AuthLevel');
    ctx.world.store.db.prepare('UPDATE users SET auth_level = ? WHERE user_id = ?').run(level, u.user_id);
    return ok(true);
  },
};

/** The first bytes of a stored parcel, to name its standard in FileInfo. */
export function standardOfContent(world: World, p: ParcelRow): string {
  const fd = fs.openSync(world.store.contentPath(p.content), 'r');
  try {
    const head = Buffer.alloc(3);
    fs.readSync(fd, head, 0, 3, 0);
    const s = head.toString('latin1');
    return s === 'ISA' ? 'X12' : s === 'UNA' || s === 'UNB' ? 'EDIFACT' : s === 'STX' ? 'TRADACOMS' : s.startsWith('<') ? 'XML' : 'Binary';
  } finally {
    fs.closeSync(fd);
  }
}
