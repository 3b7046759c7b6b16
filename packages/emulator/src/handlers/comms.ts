/**
 * Communication channels and their certificates. A comm belongs to a mailbox; `withCerts` is true
 * while it holds an Active certificate, `privateKeyRequired` for the channels that sign or
 * encrypt (AS2, AS4, OFTP, PEPPOL) or once a private certificate was added. Certificates are
 * stored (type, usage, validity, a hash of the material), never validated. A pair fixes which comm
 * carries the traffic between two grid IDs; without one, the receiver's Active comms are listed.
 */
import { createHash } from 'node:crypto';
import { canSeeMailbox, duplicateObject, invalidParameter, iso, objectNotFound, type Handler, type HandlerContext } from '../context.js';
import { callerOf, configOf, newId, saveConfig, visibleGrid, visibleMailbox, type CommRow } from './common.js';

const SIGNING_CHANNELS = new Set(['as2', 'as4', 'oftp', 'peppol']);
const INACTIVE = new Set(['Suspended', 'Terminated']);

function hasCerts(ctx: HandlerContext, commId: number): boolean {
  return ctx.world.store.db.prepare("SELECT 1 FROM certificates WHERE comm_id = ? AND status = 'Active'").get(commId) !== undefined;
}

export function commInfo(ctx: HandlerContext, c: CommRow): Record<string, unknown> {
  return {
    commId: c.comm_id,
    mailboxId: c.mailbox_id,
    commType: c.comm_type,
    identifier: c.identifier,
    status: c.status,
    useType: c.use_type,
    privateKeyRequired: c.private_key_required === 1,
    withCerts: hasCerts(ctx, c.comm_id),
  };
}

export function visibleComm(ctx: HandlerContext, commId: unknown): CommRow {
  const c = ctx.world.store.db.prepare('SELECT * FROM comms WHERE comm_id = ?').get(commId) as CommRow | undefined;
  if (!c || !canSeeMailbox(ctx.world, callerOf(ctx), c.mailbox_id)) throw objectNotFound(`comm ${String(commId)} not found`);
  return c;
}

const visibleComms = (ctx: HandlerContext): CommRow[] =>
  (ctx.world.store.db.prepare('SELECT * FROM comms ORDER BY comm_id').all() as CommRow[]).filter((c) =>
    canSeeMailbox(ctx.world, callerOf(ctx), c.mailbox_id),
  );

/** The comms between two grid IDs: the pair's comm when one is set, else the receiver's Active comms. */
function pairComms(ctx: HandlerContext): CommRow[] {
  const from = visibleGrid(ctx, ctx.input.gridIdFrom);
  const to = ctx.world.store.gridId(ctx.input.gridIdTo as number);
  if (!to) throw objectNotFound(`grid ID ${String(ctx.input.gridIdTo)} not found`);
  const { db } = ctx.world.store;
  const pair = db.prepare('SELECT comm_id FROM comm_pairs WHERE grid_id_from = ? AND grid_id_to = ?').get(from.grid_id, to.grid_id) as
    { comm_id: number } | undefined;
  if (pair) return [db.prepare('SELECT * FROM comms WHERE comm_id = ?').get(pair.comm_id) as CommRow];
  return db.prepare("SELECT * FROM comms WHERE mailbox_id = ? AND status = 'Active' ORDER BY comm_id").all(to.mailbox_id) as CommRow[];
}

export const commHandlers: Record<string, Handler> = {
  'comms.get': (ctx) => {
    const c = visibleComm(ctx, ctx.input.commId);
    return { data: { ...commInfo(ctx, c), config: configOf(ctx, 'comm', c.comm_id) } };
  },
  'comms.list': (ctx) => {
    const i = ctx.input;
    const rows = visibleComms(ctx)
      .map((c) => commInfo(ctx, c))
      .filter((c) => i.showInactive === true || !INACTIVE.has(c.status as string))
      .filter((c) => i.commType === undefined || c.commType === i.commType)
      .filter((c) => i.useType === undefined || c.useType === i.useType)
      .filter((c) => i.privateKeyRequired !== true || c.privateKeyRequired === true)
      .filter((c) => i.withCerts !== true || c.withCerts === true);
    return { data: rows };
  },
  'comms.find': (ctx) => ({
    data: visibleComms(ctx)
      .filter((c) => c.identifier === ctx.input.identifier && (ctx.input.commType === undefined || c.comm_type === ctx.input.commType))
      .map((c) => commInfo(ctx, c)),
  }),
  'comms.create': (ctx) => {
    const m = visibleMailbox(ctx, ctx.input.mailboxId);
    const { db } = ctx.world.store;
    const type = ctx.input.commType as string;
    if (db.prepare('SELECT 1 FROM comms WHERE comm_type = ? AND identifier = ?').get(type, ctx.input.identifier)) {
      throw duplicateObject(`a ${type} comm with identifier ${String(ctx.input.identifier)} already exists`);
    }
    const id = newId(ctx, 'comms', 'comm_id', 'comm', 3001);
    db.prepare('INSERT INTO comms VALUES (?, ?, ?, ?, ?, ?, ?, ?)').run(
      id,
      m.mailbox_id,
      type,
      ctx.input.identifier,
      'Active',
      (ctx.input.useType as string | undefined) ?? 'TestAndProduction',
      SIGNING_CHANNELS.has(type) ? 1 : 0,
      iso(ctx.world.now()),
    );
    return { data: commInfo(ctx, visibleComm(ctx, id)) };
  },
  'comms.update': (ctx) => {
    const c = visibleComm(ctx, ctx.input.commId);
    const { db } = ctx.world.store;
    if (ctx.input.identifier !== undefined) {
      if ((ctx.input.identifier as string).trim() === '') throw invalidParameter('identifier: must not be empty');
      const clash = db
        .prepare('SELECT 1 FROM comms WHERE comm_type = ? AND identifier = ? AND comm_id <> ?')
        .get(c.comm_type, ctx.input.identifier, c.comm_id);
      if (clash) throw duplicateObject(`a ${c.comm_type} comm with identifier ${String(ctx.input.identifier)} already exists`);
      db.prepare('UPDATE comms SET identifier = ? WHERE comm_id = ?').run(ctx.input.identifier, c.comm_id);
    }
    if (ctx.input.status !== undefined) db.prepare('UPDATE comms SET status = ? WHERE comm_id = ?').run(ctx.input.status, c.comm_id);
    return { data: commInfo(ctx, visibleComm(ctx, c.comm_id)) };
  },
  'comms.updateConfig': (ctx) => {
    const c = visibleComm(ctx, ctx.input.commId);
    saveConfig(ctx, 'comm', c.comm_id, 'commId');
    return { data: true };
  },
  'comms.pair': (ctx) => ({ data: pairComms(ctx).map((c) => commInfo(ctx, c)) }),
  'comms.setPair': (ctx) => {
    const from = visibleGrid(ctx, ctx.input.gridIdFrom);
    const to = ctx.world.store.gridId(ctx.input.gridIdTo as number);
    if (!to) throw objectNotFound(`grid ID ${String(ctx.input.gridIdTo)} not found`);
    const { db } = ctx.world.store;
    if (ctx.input.commId === undefined) {
      db.prepare('DELETE FROM comm_pairs WHERE grid_id_from = ? AND grid_id_to = ?').run(from.grid_id, to.grid_id);
    } else {
      // The service asks only for an existing comm: it need not belong to either grid ID's mailbox.
      const c = db.prepare('SELECT * FROM comms WHERE comm_id = ?').get(ctx.input.commId) as CommRow | undefined;
      if (!c) throw invalidParameter(`commId: ${String(ctx.input.commId)} is not a comm`);
      db.prepare(
        'INSERT INTO comm_pairs VALUES (?, ?, ?) ON CONFLICT (grid_id_from, grid_id_to) DO UPDATE SET comm_id = excluded.comm_id',
      ).run(from.grid_id, to.grid_id, c.comm_id);
    }
    return { data: pairComms(ctx).map((c) => commInfo(ctx, c)) };
  },
};

// ------------------------------------------------------------------ certificates

interface CertRow {
  cert_key_id: number;
  comm_id: number;
  kind: string;
  status: string;
  expires: string | null;
}

function addCertificate(
  ctx: HandlerContext,
  kind: 'private' | 'public' | 'generated',
  certType: string,
  expiresMs: number | null,
): Record<string, unknown> {
  const c = visibleComm(ctx, ctx.input.commId);
  const cert = ctx.input.cert as string | undefined;
  if (cert !== undefined && (cert.length === 0 || !/^[A-Za-z0-9+/=\s]+$/.test(cert))) throw invalidParameter('cert: must be base64');
  const now = ctx.world.now();
  const begin = (ctx.input.beginUsage as string | undefined) ?? iso(now);
  const { db } = ctx.world.store;
  const id = newId(ctx, 'certificates', 'cert_key_id', 'certificate', 5001);
  db.transaction(() => {
    db.prepare('INSERT INTO certificates VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').run(
      id,
      c.comm_id,
      kind,
      certType,
      (ctx.input.usage as string | undefined) ?? 'EncryptionAndSignature',
      begin,
      expiresMs === null ? null : iso(expiresMs),
      cert ? createHash('sha256').update(cert.replace(/\s+/g, '')).digest('hex') : null,
      'Active',
      iso(now),
    );
    if (kind !== 'public') db.prepare('UPDATE comms SET private_key_required = 1 WHERE comm_id = ?').run(c.comm_id);
  })();
  return { ...commInfo(ctx, visibleComm(ctx, c.comm_id)), certKeyId: id };
}

function liveCertificate(ctx: HandlerContext): CertRow {
  const c = visibleComm(ctx, ctx.input.commId);
  const cert = ctx.world.store.db
    .prepare("SELECT * FROM certificates WHERE cert_key_id = ? AND comm_id = ? AND status = 'Active'")
    .get(ctx.input.certKeyId, c.comm_id) as CertRow | undefined;
  if (!cert) throw objectNotFound(`certificate ${String(ctx.input.certKeyId)} of comm ${c.comm_id} not found`);
  return cert;
}

const YEAR_MS = 365 * 24 * 3600_000;
const DAY_MS = 24 * 3600_000;

export const certificateHandlers: Record<string, Handler> = {
  'certificates.addPrivate': (ctx) => ({ data: addCertificate(ctx, 'private', ctx.input.certType as string, null) }),
  'certificates.addPublic': (ctx) => ({ data: addCertificate(ctx, 'public', ctx.input.certType as string, null) }),
  'certificates.create': (ctx) => {
    const expires = ctx.input.expires === undefined ? ctx.world.now() + 2 * YEAR_MS : Date.parse(ctx.input.expires as string);
    if (expires <= ctx.world.now()) throw invalidParameter('expires: must be in the future');
    return { data: addCertificate(ctx, 'generated', 'X509', expires) };
  },
  'certificates.renew': (ctx) => {
    const old = liveCertificate(ctx);
    const years = (ctx.input.years as number | undefined) ?? 2;
    const overlap = (ctx.input.overlapDays as number | undefined) ?? 30;
    if (years > 20) throw invalidParameter('years: at most 20');
    if (overlap > 365) throw invalidParameter('overlapDays: at most 365');
    const data = addCertificate(ctx, 'generated', 'X509', ctx.world.now() + years * YEAR_MS);
    // The old certificate stays valid for the overlap, then ends.
    ctx.world.store.db
      .prepare('UPDATE certificates SET expires = ? WHERE cert_key_id = ?')
      .run(iso(ctx.world.now() + overlap * DAY_MS), old.cert_key_id);
    return { data };
  },
  'certificates.terminate': (ctx) => {
    const cert = liveCertificate(ctx);
    ctx.world.store.db.prepare("UPDATE certificates SET status = 'Terminated' WHERE cert_key_id = ?").run(cert.cert_key_id);
    return { data: true };
  },
};
