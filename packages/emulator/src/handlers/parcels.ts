/** Parcel handlers (15) and interchange handlers (8): docs/wire.md#inbound-states, docs/wire.md#records, docs/wire.md#catalog. */
import { UploadRequest, ISA_FIELDS } from '@gridsync/protocol/catalog';
import { parseInterchanges } from '../edi.js';
import { invalidParameter, iso, objectNotFound, resolveMailbox, visibleParcel, type Handler, type HandlerContext } from '../context.js';
import { discardContent, receiveContentBody, storeBuffer, streamDownload } from '../content.js';
import { confirmParcel, deliver, parcelInfo, routeOf } from '../parcels.js';
import type { InterchangeRow, ParcelRow } from '../store.js';

function page(input: Record<string, unknown>, dflt: number): { limit: number; offset: number } {
  const pageNo = (input.pageNo as number | undefined) ?? 1;
  const limit = (input.recordsPerPage as number | undefined) ?? dflt;
  return { limit, offset: (pageNo - 1) * limit };
}

function listParcels(ctx: HandlerContext, direction: 'in' | 'out'): ParcelRow[] {
  const { input, world } = ctx;
  const mailboxId = resolveMailbox(ctx, input.mailboxId);
  const where = ['mailbox_id = ?', 'direction = ?'];
  const args: unknown[] = [mailboxId, direction];
  if (input.status !== undefined) {
    where.push('status = ?');
    args.push(input.status);
  } else if (direction === 'in') {
    // Without a status filter the inbox list shows only what is not yet confirmed (docs/wire.md#legacy-download).
    where.push("status = 'InBoxReady'");
  }
  for (const [field, col] of [
    ['gridIdFrom', 'grid_id_from'],
    ['gridIdTo', 'grid_id_to'],
  ] as const) {
    if (input[field] !== undefined) {
      where.push(`${col} = ?`);
      args.push(input[field]);
    }
  }
  if (input.beginDate !== undefined) {
    where.push('created_ms >= ?');
    args.push(Date.parse(input.beginDate as string));
  }
  if (input.endDate !== undefined) {
    where.push('created_ms <= ?');
    args.push(Date.parse(input.endDate as string));
  }
  const { limit, offset } = page(input, 25);
  return world.store.db
    .prepare(`SELECT * FROM parcels WHERE ${where.join(' AND ')} ORDER BY parcel_id LIMIT ? OFFSET ?`)
    .all(...args, limit, offset) as ParcelRow[];
}

const upload: Handler = async (ctx) => {
  const { world, caller, req } = ctx;
  const { fields, content } = await receiveContentBody(world, req, world.settings.maxUploadBytes);
  try {
    if (!content) throw invalidParameter('content: required');
    const parsed = UploadRequest.safeParse({ ...fields, content: '' });
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw invalidParameter(`${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid'}`);
    }
    const r = parsed.data;
    if (r.bytes !== undefined && r.bytes !== content.bytes)
      throw invalidParameter(`bytes: ${r.bytes} does not match the decoded content length ${content.bytes}`);
    const fromMailbox = resolveMailbox(ctx, r.mailboxId ?? caller?.mailbox_id);
    const route = routeOf(world, content.head, r.gridIdFrom, r.gridIdTo);
    const { outParcelId } = deliver(world, { fromMailbox, fileName: r.fileName, content, gridIdFrom: route.from, gridIdTo: route.to });
    return { data: outParcelId };
  } catch (err) {
    discardContent(world, content);
    throw err;
  }
};

const download: Handler = (ctx) => {
  const p = visibleParcel(ctx, ctx.input.parcelId as number);
  if (p.direction !== 'in') throw invalidParameter(`parcelId: parcel ${p.parcel_id} is not an inbound parcel`);
  const { world } = ctx;
  if (world.settings.legacyDownloadMode && p.status === 'InBoxReady') {
    world.store.db
      .prepare('UPDATE parcels SET hidden_until = ? WHERE parcel_id = ?')
      .run(world.now() + world.settings.redeliverAfterMs, p.parcel_id);
  }
  return { stream: streamDownload(world, p, ctx.plan) };
};

const confirm: Handler = (ctx) => {
  const p = visibleParcel(ctx, ctx.input.parcelId as number);
  if (p.direction !== 'in') throw invalidParameter(`parcelId: parcel ${p.parcel_id} is an outbound parcel`);
  confirmParcel(ctx.world, p);
  return { data: true };
};

const get: Handler = (ctx) => ({ data: parcelInfo(visibleParcel(ctx, ctx.input.parcelId as number)) });

const pendingInboxList: Handler = (ctx) => {
  const mailboxId = resolveMailbox(ctx, ctx.input.mailboxId);
  const rows = ctx.world.store.db
    .prepare(
      "SELECT * FROM parcels WHERE mailbox_id = ? AND direction = 'in' AND status = 'InBoxReady' AND (hidden_until IS NULL OR hidden_until <= ?) ORDER BY parcel_id",
    )
    .all(mailboxId, ctx.world.now()) as ParcelRow[];
  return { data: rows.map((p) => parcelInfo(p, false)) };
};

const resetToInbox: Handler = (ctx) => {
  const p = visibleParcel(ctx, ctx.input.parcelId as number);
  if (p.direction !== 'in') throw invalidParameter(`parcelId: parcel ${p.parcel_id} is an outbound parcel`);
  ctx.world.store.db
    .prepare("UPDATE parcels SET status = 'InBoxReady', hidden_until = NULL, modified = ? WHERE parcel_id = ?")
    .run(iso(ctx.world.now()), p.parcel_id);
  return { data: true };
};

const cancel: Handler = (ctx) => {
  const p = visibleParcel(ctx, ctx.input.parcelId as number);
  if (p.direction !== 'out') throw invalidParameter(`parcelId: parcel ${p.parcel_id} is an inbound parcel`);
  const peer = p.peer_parcel_id === null ? undefined : ctx.world.store.parcel(p.peer_parcel_id);
  if (p.status === 'OutBoxDelivered' || (peer && peer.status !== 'InBoxReady'))
    throw invalidParameter(`parcelId: parcel ${p.parcel_id} is already delivered`);
  const now = iso(ctx.world.now());
  ctx.world.store.db.transaction(() => {
    ctx.world.store.db
      .prepare("UPDATE parcels SET status = 'Cancelled', modified = ? WHERE parcel_id IN (?, ?)")
      .run(now, p.parcel_id, p.peer_parcel_id ?? -1);
  })();
  return { data: true };
};

const findMailbagControlId: Handler = (ctx) => {
  const mailboxId = resolveMailbox(ctx, ctx.input.mailboxId);
  const rows = ctx.world.store.db
    .prepare('SELECT * FROM parcels WHERE mailbox_id = ? AND mailbag_control_id = ? ORDER BY parcel_id')
    .all(mailboxId, ctx.input.mailbagControlId) as ParcelRow[];
  return { data: rows.map((p) => parcelInfo(p)) };
};

const setMailbagControlId: Handler = (ctx) => {
  const p = visibleParcel(ctx, ctx.input.parcelId as number);
  ctx.world.store.db.prepare('UPDATE parcels SET mailbag_control_id = ? WHERE parcel_id = ?').run(ctx.input.mailbagControlId, p.parcel_id);
  return { data: true };
};

const interchangeInfo = (r: InterchangeRow): Record<string, unknown> => ({
  interchangeId: r.interchange_id,
  parcelId: r.parcel_id,
  sender: r.sender,
  receiver: r.receiver,
  standard: r.standard,
  documentType: r.document_type,
  status: r.status,
  created: r.created,
});

const manifest: Handler = (ctx) => {
  const p = visibleParcel(ctx, ctx.input.parcelId as number);
  const rows = ctx.world.store.db
    .prepare('SELECT * FROM interchanges WHERE parcel_id = ? ORDER BY interchange_id')
    .all(p.parcel_id) as InterchangeRow[];
  return {
    data: rows.map((r) => ({
      interchangeId: r.interchange_id,
      sender: r.sender,
      receiver: r.receiver,
      documentType: r.document_type ?? '',
      count: 1,
    })),
  };
};

const update: Handler = (ctx) => {
  const p = visibleParcel(ctx, ctx.input.parcelId as number);
  if (ctx.input.status !== undefined) {
    ctx.world.store.db
      .prepare('UPDATE parcels SET status = ?, modified = ? WHERE parcel_id = ?')
      .run(ctx.input.status, iso(ctx.world.now()), p.parcel_id);
  }
  return { data: parcelInfo(ctx.world.store.parcel(p.parcel_id) as ParcelRow) };
};

const acknowledgmentNote: Handler = (ctx) => {
  visibleParcel(ctx, ctx.input.parcelId as number);
  return { data: true };
};

const sendTestFile: Handler = (ctx) => {
  const from = ctx.input.gridIdFrom as number;
  const to = ctx.input.gridIdTo as number;
  const grid = ctx.world.store.gridId(from);
  if (!grid) throw objectNotFound(`grid ID ${from} not found`);
  const fromMailbox = resolveMailbox(ctx, grid.mailbox_id);
  const content = storeBuffer(ctx.world, Buffer.from(`TEST FILE ${String(ctx.input.documentType ?? '')} ${iso(ctx.world.now())}\n`));
  try {
    return { data: deliver(ctx.world, { fromMailbox, fileName: 'test-file.txt', content, gridIdFrom: from, gridIdTo: to }).outParcelId };
  } catch (err) {
    discardContent(ctx.world, content);
    throw err;
  }
};

function visibleInterchange(ctx: HandlerContext): InterchangeRow {
  const r = ctx.world.store.db.prepare('SELECT * FROM interchanges WHERE interchange_id = ?').get(ctx.input.interchangeId) as
    InterchangeRow | undefined;
  if (!r) throw objectNotFound(`interchange ${String(ctx.input.interchangeId)} not found`);
  resolveMailbox(ctx, r.mailbox_id);
  return r;
}

function interchangeList(direction: 'in' | 'out'): Handler {
  return (ctx) => {
    const mailboxId = resolveMailbox(ctx, ctx.input.mailboxId);
    const where = ['mailbox_id = ?', 'direction = ?'];
    const args: unknown[] = [mailboxId, direction];
    if (ctx.input.beginDate !== undefined) {
      where.push('created_ms >= ?');
      args.push(Date.parse(ctx.input.beginDate as string));
    }
    if (ctx.input.endDate !== undefined) {
      where.push('created_ms <= ?');
      args.push(Date.parse(ctx.input.endDate as string));
    }
    const db = ctx.world.store.db;
    const total = (db.prepare(`SELECT count(*) AS n FROM interchanges WHERE ${where.join(' AND ')}`).get(...args) as { n: number }).n;
    const { limit, offset } = page(ctx.input, 100);
    const rows = db
      .prepare(`SELECT * FROM interchanges WHERE ${where.join(' AND ')} ORDER BY interchange_id LIMIT ? OFFSET ?`)
      .all(...args, limit, offset) as InterchangeRow[];
    return {
      data: {
        totalRecords: total,
        pageNo: (ctx.input.pageNo as number | undefined) ?? 1,
        recordsPerPage: limit,
        interchanges: rows.map(interchangeInfo),
      },
    };
  };
}

function headerOf(text: string): string[] {
  const ix = parseInterchanges(text.trim())[0];
  if (!ix || ix.standard !== 'X12') throw invalidParameter('interchangeHeader: not an X12 ISA segment of 106 characters');
  const el = ix.header[3] as string;
  return ix.header.slice(0, 105).split(el).slice(1);
}

export const parcelHandlers: Record<string, Handler> = {
  'parcels.upload': upload,
  'parcels.download': download,
  'parcels.confirm': confirm,
  'parcels.get': get,
  'parcels.inboxList': (ctx) => ({ data: listParcels(ctx, 'in').map((p) => parcelInfo(p)) }),
  'parcels.outboxList': (ctx) => ({ data: listParcels(ctx, 'out').map((p) => parcelInfo(p)) }),
  'parcels.pendingInboxList': pendingInboxList,
  'parcels.findMailbagControlId': findMailbagControlId,
  'parcels.setMailbagControlId': setMailbagControlId,
  'parcels.manifest': manifest,
  'parcels.cancel': cancel,
  'parcels.resetToInbox': resetToInbox,
  'parcels.update': update,
  'parcels.acknowledgmentNote': acknowledgmentNote,
  'parcels.sendTestFile': sendTestFile,
  'interchanges.get': (ctx) => ({ data: interchangeInfo(visibleInterchange(ctx)) }),
  'interchanges.inboxList': interchangeList('in'),
  'interchanges.outboxList': interchangeList('out'),
  'interchanges.cancel': (ctx) => {
    const r = visibleInterchange(ctx);
    if (r.status === 'Delivered') throw invalidParameter(`interchangeId: interchange ${r.interchange_id} is already delivered`);
    ctx.world.store.db.prepare("UPDATE interchanges SET status = 'Cancelled' WHERE interchange_id = ?").run(r.interchange_id);
    return { data: true };
  },
  'interchanges.resend': (ctx) => {
    visibleInterchange(ctx);
    return { data: true };
  },
  'interchanges.getManifest': (ctx) => {
    const r = visibleInterchange(ctx);
    return {
      data: [
        {
          functionalGroup: r.standard === 'X12' ? 'GS' : 'UNG',
          transactionSetType: r.document_type ?? '',
          transactionSetCount: 1,
          groupControlNumber: r.control_number,
        },
      ],
    };
  },
  'interchanges.getHeader': (ctx) => {
    const values = headerOf(ctx.input.interchangeHeader as string);
    return { data: Object.fromEntries(ISA_FIELDS.map((f, i) => [f, (values[i] ?? '').trim()])) };
  },
  'interchanges.getDate': (ctx) => {
    const v = headerOf(ctx.input.interchangeHeader as string);
    const d = v[8] ?? '';
    const t = v[9] ?? '';
    const when = Date.parse(`20${d.slice(0, 2)}-${d.slice(2, 4)}-${d.slice(4, 6)}T${t.slice(0, 2)}:${t.slice(2, 4)}:00Z`);
    if (Number.isNaN(when)) throw invalidParameter('interchangeHeader: ISA09/ISA10 is not a date and time');
    return { data: iso(when) };
  },
};
