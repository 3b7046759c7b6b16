/**
 * The operations on one parcel: download (as a stream, or hidden for redelivery in legacy mode),
 * upload (checked, routed, delivered), confirm, reset, cancel, its record and manifest.
 */
import fs from 'node:fs';
import { canSeeMailbox, iso, type World } from '../../context.js';
import { discardContent } from '../../content.js';
import { confirmParcel, deliver, routeOf } from '../../parcels.js';
import type { InterchangeRow, ParcelRow } from '../../store.js';
import { RET, fault } from '../fault.js';
import { parcelRecord } from '../records.js';
import { mailboxOf, me, num, ok, parcelOf, requireLevel, str, type Operation } from './context.js';

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

/** Reset and cancel: one update of an inbound parcel, stamped with the time. */
function setInbound(update: string): Operation {
  return (ctx) => {
    const p = parcelOf(ctx, 'in');
    ctx.world.store.db.prepare(update).run(iso(ctx.world.now()), p.parcel_id);
    return ok(true);
  };
}

export const PARCEL_OPERATIONS: Record<string, Operation> = {
  ParcelDownload: download(false, true),
  ParcelDownloadA: download(true, true),
  ParcelDownloadNoUpdate: download(false, false),
  ParcelDownloadNoUpdateA: download(true, false),
  ParcelDownloadConfirm: (ctx) => {
    confirmParcel(ctx.world, parcelOf(ctx, 'in'));
    return ok(true);
  },
  ParcelDownloadReset: setInbound("UPDATE parcels SET status = 'InBoxReady', hidden_until = NULL, modified = ? WHERE parcel_id = ?"),
  ParcelDownloadCancel: setInbound("UPDATE parcels SET status = 'Cancelled', modified = ? WHERE parcel_id = ?"),
  ParcelUpload: upload('envelope', false),
  ParcelUploadA: upload('envelope', true),
  ParcelUploadEx: upload('mailbox', false),
  ParcelUploadExA: upload('mailbox', true),
  ParcelUploadMft: upload('partners', false),
  ParcelUploadMftA: upload('partners', true),
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
