/**
 * The parcel lifecycle of docs/wire.md#inbound-states over the store: delivery (routing over an Active
 * interconnect into the receiver's inbox), streamed content in both directions, confirm, reset,
 * cancel, interchanges, and the demo partner's acknowledgments.
 */
import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Base64Decoder, Base64Encoder, InvalidBase64Error, base64Length } from '../api/index.js';
import { JsonStreamError, readJsonStreaming } from '../api/index.js';
import { boundedBody, maxUploadRequestBytes } from './request-body.js';
import { fireParcelEvent } from './callbacks.js';
import { acknowledgment, parseInterchanges, startsLikeEdi, type Interchange, type Party } from './edi.js';
import { EmulatorError, invalidParameter, iso, type World } from './context.js';
import type { FaultPlan } from './faults.js';
import type { ParcelRow } from './store.js';

/** Parcel content parsed for interchanges only up to this size. */
const INTERCHANGE_SCAN_LIMIT = 8 * 1024 * 1024;
const HEAD_BYTES = 4096;

export interface StoredContent {
  /** File name in the content directory. */
  readonly name: string;
  readonly bytes: number;
  readonly sha256: string;
  /** First bytes, for routing by envelope. */
  readonly head: Buffer;
  /** The whole content when it is small (already in memory): no second read to scan it. */
  readonly data?: Buffer;
}

/**
 * Content up to this size is kept in memory while it arrives and written with one call, and sent
 * from one read: a stream per small parcel (open, writes and close on the thread pool) cost more
 * CPU than the rest of the request.
 */
const SMALL_CONTENT = 256 * 1024;

/**
 * Streams a JSON body with a base64 `content` field into a content file (decoded, hashed,
 * counted), and returns the other fields. Whitespace inside the base64 is tolerated (docs/wire.md#limits);
 * anything else invalid is a 400.
 */
export async function receiveContentBody(
  world: World,
  req: IncomingMessage,
  maxBytes: number,
): Promise<{ fields: Record<string, unknown>; content: StoredContent | undefined }> {
  const name = `tmp-${randomUUID()}`;
  const file = world.store.contentPath(name);
  // Small content stays in memory and is written with one call at the end; past SMALL_CONTENT it
  // goes to a stream from then on.
  let small: Buffer[] | undefined = [];
  let smallBytes = 0;
  let out: fs.WriteStream | undefined;
  // A write still in flight when the request breaks off fails after destroy(): without a listener
  // that 'error' event would be an uncaught exception and end the process.
  let writeError: Error | undefined;
  const openStream = (): fs.WriteStream => {
    const stream = fs.createWriteStream(file);
    stream.on('error', (err) => {
      writeError ??= err;
    });
    for (const b of small ?? []) stream.write(b);
    small = undefined;
    return stream;
  };
  const decoder = new Base64Decoder();
  const hash = createHash('sha256');
  const head: Buffer[] = [];
  let headBytes = 0;
  const write = async (buf: Buffer): Promise<void> => {
    if (buf.length === 0) return;
    if (decoder.bytes > maxBytes) throw invalidParameter(`content: larger than the maximum parcel size of ${maxBytes} bytes`);
    hash.update(buf);
    if (headBytes < HEAD_BYTES) {
      head.push(buf.subarray(0, HEAD_BYTES - headBytes));
      headBytes += Math.min(buf.length, HEAD_BYTES - headBytes);
    }
    if (small && smallBytes + buf.length <= SMALL_CONTENT) {
      small.push(buf);
      smallBytes += buf.length;
      return;
    }
    out ??= openStream();
    const stream = out;
    if (writeError) throw writeError;
    if (!stream.write(buf)) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          stream.off('drain', done);
          stream.off('close', done);
          resolve();
        };
        stream.on('drain', done);
        stream.on('close', done);
      });
      if (writeError) throw writeError;
    }
  };
  try {
    const parsed = await readJsonStreaming(boundedBody(req, { maxBytes: maxUploadRequestBytes(maxBytes) }), {
      streamField: ['content'],
      onChunk: (text) => write(decoder.push(/\s/.test(text) ? text.replace(/\s+/g, '') : text)),
    });
    if (parsed.streamedFieldSeen) decoder.end();
    let data: Buffer | undefined;
    if (out) {
      const stream = out;
      await new Promise<void>((resolve, reject) => stream.end((err?: Error | null) => (err ? reject(err) : resolve())));
    } else {
      data = Buffer.concat(small ?? [], smallBytes);
      fs.writeFileSync(file, data);
    }
    const fields =
      parsed.value && typeof parsed.value === 'object' && !Array.isArray(parsed.value)
        ? (parsed.value as Record<string, unknown>)
        : undefined;
    if (!fields) throw invalidParameter('body: must be a JSON object');
    if (!parsed.streamedFieldSeen) {
      fs.rmSync(file, { force: true });
      return { fields, content: undefined };
    }
    return {
      fields,
      content: { name, bytes: decoder.bytes, sha256: hash.digest('hex'), head: Buffer.concat(head), ...(data ? { data } : {}) },
    };
  } catch (err) {
    // The stream opens its file asynchronously: removing it before the stream is closed could
    // leave a file created after the removal.
    const stream = out;
    if (stream) {
      await new Promise<void>((resolve) => {
        if (stream.closed) return resolve();
        stream.once('close', () => resolve());
        stream.destroy();
      });
    }
    fs.rmSync(file, { force: true });
    if (err instanceof InvalidBase64Error) throw invalidParameter(`content: ${err.message}`);
    if (err instanceof JsonStreamError) throw invalidParameter(`body: ${err.message}`);
    throw err;
  }
}

export function discardContent(world: World, content: StoredContent | undefined): void {
  if (content) fs.rmSync(world.store.contentPath(content.name), { force: true });
}

function partyOf(ix: Interchange | undefined, which: 'sender' | 'receiver'): Party | undefined {
  return ix ? ix[which] : undefined;
}

/** Sender and receiver grid IDs: both given, or read from the first ISA/UNB envelope. */
export function routeOf(world: World, head: Buffer, gridIdFrom?: number, gridIdTo?: number): { from: number; to: number } {
  if (gridIdFrom !== undefined && gridIdTo !== undefined) return { from: gridIdFrom, to: gridIdTo };
  const ix = parseInterchanges(head.toString('latin1'))[0];
  const s = partyOf(ix, 'sender');
  const r = partyOf(ix, 'receiver');
  if (!s || !r) throw invalidParameter('cannot route: no gridIdFrom/gridIdTo and no X12 ISA or EDIFACT UNB envelope to read them from');
  const from = gridIdFrom ?? world.store.gridIdByName(s.qualifier, s.id)?.grid_id;
  const to = gridIdTo ?? world.store.gridIdByName(r.qualifier, r.id)?.grid_id;
  if (from === undefined) throw invalidParameter(`cannot route: sender ${s.qualifier}/${s.id} is not a grid ID`);
  if (to === undefined) throw invalidParameter(`cannot route: receiver ${r.qualifier}/${r.id} is not a grid ID`);
  return { from, to };
}

export interface Delivery {
  readonly fromMailbox: number | null;
  readonly fileName: string;
  readonly content: StoredContent;
  readonly gridIdFrom: number | null;
  readonly gridIdTo: number | null;
  /** The receiving mailbox; derived from gridIdTo when omitted. */
  readonly toMailbox?: number;
}

/**
 * Creates the sender's outbound parcel (when the sender is a mailbox) and the receiver's
 * InBoxReady parcel, in one transaction, after checking the route. Returns both ids.
 */
export function deliver(world: World, d: Delivery): { outParcelId: number | null; inParcelId: number } {
  const { store } = world;
  let toMailbox = d.toMailbox;
  if (d.fromMailbox !== null && d.gridIdFrom !== null && d.gridIdTo !== null) {
    const from = store.gridId(d.gridIdFrom);
    const to = store.gridId(d.gridIdTo);
    if (!from) throw invalidParameter(`cannot route: gridIdFrom ${d.gridIdFrom} does not exist`);
    if (!to) throw invalidParameter(`cannot route: gridIdTo ${d.gridIdTo} does not exist`);
    if (from.mailbox_id !== d.fromMailbox)
      throw invalidParameter(`cannot route: gridIdFrom ${d.gridIdFrom} is not a grid ID of mailbox ${d.fromMailbox}`);
    if (from.status !== 'Active' || to.status !== 'Active') throw invalidParameter('cannot route: a grid ID of the route is not Active');
    if (!store.activeInterconnect(from.grid_id, to.grid_id))
      throw invalidParameter(`cannot route: no Active interconnect between grid IDs ${from.grid_id} and ${to.grid_id}`);
    toMailbox ??= to.mailbox_id;
  }
  if (toMailbox === undefined) throw invalidParameter('cannot route: no receiver');
  const receiver = store.db.prepare('SELECT network_id, status FROM mailboxes WHERE mailbox_id = ?').get(toMailbox) as
    { network_id: number; status: string } | undefined;
  if (!receiver) throw invalidParameter(`cannot route: mailbox ${toMailbox} does not exist`);
  if (receiver.status === 'Terminated' || receiver.status === 'Suspended')
    throw invalidParameter(`cannot route: mailbox ${toMailbox} is ${receiver.status}`);
  const now = world.now();
  const interchanges = scanInterchanges(world, d.content);
  const insert = store.db.prepare(
    `INSERT INTO parcels (parcel_id, mailbox_id, network_id, direction, status, file_name, bytes, sha256, grid_id_from, grid_id_to,
       created, created_ms, modified, mailbag_control_id, content, peer_parcel_id, hidden_until)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, NULL)`,
  );
  const result = store.db.transaction(() => {
    const inParcelId = store.nextId('parcel', 100_001);
    const outParcelId = d.fromMailbox === null ? null : store.nextId('parcel', 100_001);
    const contentName = `c-${inParcelId}`;
    fs.renameSync(store.contentPath(d.content.name), store.contentPath(contentName));
    if (outParcelId !== null && d.fromMailbox !== null) {
      const sender = store.db.prepare('SELECT network_id FROM mailboxes WHERE mailbox_id = ?').get(d.fromMailbox) as { network_id: number };
      insert.run(
        outParcelId,
        d.fromMailbox,
        sender.network_id,
        'out',
        'outboxSent',
        d.fileName,
        d.content.bytes,
        d.content.sha256,
        d.gridIdFrom,
        d.gridIdTo,
        iso(now),
        now,
        iso(now),
        contentName,
        inParcelId,
      );
    }
    insert.run(
      inParcelId,
      toMailbox,
      receiver.network_id,
      'in',
      'InBoxReady',
      d.fileName,
      d.content.bytes,
      d.content.sha256,
      d.gridIdFrom,
      d.gridIdTo,
      iso(now),
      now,
      iso(now),
      contentName,
      outParcelId,
    );
    const ixInsert = store.db.prepare(
      `INSERT INTO interchanges (interchange_id, parcel_id, mailbox_id, direction, sender, receiver, standard, document_type, control_number, header, status, created, created_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    for (const ix of interchanges) {
      const rows: [number, number, 'in' | 'out'][] = [[inParcelId, toMailbox as number, 'in']];
      if (outParcelId !== null && d.fromMailbox !== null) rows.push([outParcelId, d.fromMailbox, 'out']);
      for (const [parcelId, mailboxId, dir] of rows) {
        ixInsert.run(
          store.nextId('interchange', 900_001),
          parcelId,
          mailboxId,
          dir,
          `${ix.sender.qualifier}/${ix.sender.id}`,
          `${ix.receiver.qualifier}/${ix.receiver.id}`,
          ix.standard,
          ix.documentType,
          ix.controlNumber,
          ix.header,
          'Received',
          iso(now),
          now,
        );
      }
    }
    const copies = copyToCarbonCopies(world, inParcelId, toMailbox as number, d.fromMailbox);
    return { outParcelId, inParcelId, copies };
  })();
  fireParcelEvent(world, toMailbox, parcelInfo(store.parcel(result.inParcelId) as ParcelRow));
  for (const c of result.copies) fireParcelEvent(world, c.mailbox_id, parcelInfo(c));
  const mb = store.db.prepare('SELECT auto_ack FROM mailboxes WHERE mailbox_id = ?').get(toMailbox) as { auto_ack: number };
  if (mb.auto_ack && d.fromMailbox !== null && d.gridIdFrom !== null && d.gridIdTo !== null) {
    const from = d.gridIdFrom;
    const to = d.gridIdTo;
    world.later(() => acknowledge(world, result.inParcelId, interchanges, to, from), world.settings.acknowledgeDelayMs);
  }
  return { outParcelId: result.outParcelId, inParcelId: result.inParcelId };
}

/**
 * Active carbon-copy rules of the receiving mailbox (direction InBox or NoDir) and of the sending
 * one (OutBox or NoDir) each get a copy of the delivered parcel as a new InBoxReady parcel in the
 * rule's target mailbox, sharing the content file. Called inside the delivery's transaction.
 */
function copyToCarbonCopies(world: World, inParcelId: number, toMailbox: number, fromMailbox: number | null): ParcelRow[] {
  const { store } = world;
  const rules = store.db
    .prepare(
      `SELECT c.to_mailbox_id, m.network_id FROM carbon_copies c JOIN mailboxes m ON m.mailbox_id = c.to_mailbox_id
         WHERE c.status = 'Active' AND m.status NOT IN ('Suspended', 'Terminated')
           AND ((c.from_mailbox_id = ? AND c.direction IN ('InBox', 'NoDir')) OR (c.from_mailbox_id = ? AND c.direction IN ('OutBox', 'NoDir')))
         ORDER BY c.cc_id`,
    )
    .all(toMailbox, fromMailbox ?? -1) as { to_mailbox_id: number; network_id: number }[];
  if (rules.length === 0) return [];
  const original = store.parcel(inParcelId) as ParcelRow;
  const copies: ParcelRow[] = [];
  for (const rule of rules) {
    const id = store.nextId('parcel', 100_001);
    store.db
      .prepare(
        `INSERT INTO parcels (parcel_id, mailbox_id, network_id, direction, status, file_name, bytes, sha256, grid_id_from, grid_id_to,
           created, created_ms, modified, mailbag_control_id, content, peer_parcel_id, hidden_until)
         VALUES (?, ?, ?, 'in', 'InBoxReady', ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, NULL, NULL)`,
      )
      .run(
        id,
        rule.to_mailbox_id,
        rule.network_id,
        original.file_name,
        original.bytes,
        original.sha256,
        original.grid_id_from,
        original.grid_id_to,
        original.created,
        original.created_ms,
        original.modified,
        original.content,
      );
    copies.push(store.parcel(id) as ParcelRow);
  }
  return copies;
}

function scanInterchanges(world: World, content: StoredContent): Interchange[] {
  if (content.bytes > INTERCHANGE_SCAN_LIMIT || !startsLikeEdi(content.head)) return [];
  return parseInterchanges(content.data ?? fs.readFileSync(world.store.contentPath(content.name)));
}

/**
 * At start-up: the demo partner answers what reached it while no process was there to do it (sent
 * just before a stop, or by a `once` that ended first) — its pick-up is a timer, and timers die
 * with the process; the store is what remembers. They are answered before the emulator serves its
 * first request (they have waited long enough): the next run's first listing already holds the reply.
 */
export function resumeAcknowledgments(world: World): void {
  const waiting = world.store.db
    .prepare(
      `SELECT p.* FROM parcels p JOIN mailboxes m ON m.mailbox_id = p.mailbox_id
         WHERE m.auto_ack = 1 AND p.direction = 'in' AND p.status = 'InBoxReady' AND p.peer_parcel_id IS NOT NULL
           AND p.grid_id_from IS NOT NULL AND p.grid_id_to IS NOT NULL
         ORDER BY p.parcel_id`,
    )
    .all() as ParcelRow[];
  for (const p of waiting) {
    const interchanges = scanInterchanges(world, { name: p.content, bytes: p.bytes, sha256: p.sha256, head: readHead(world, p.content) });
    const [own, sender] = [p.grid_id_to as number, p.grid_id_from as number];
    acknowledge(world, p.parcel_id, interchanges, own, sender);
  }
}

function readHead(world: World, name: string): Buffer {
  const fd = fs.openSync(world.store.contentPath(name), 'r');
  try {
    const head = Buffer.alloc(HEAD_BYTES);
    return head.subarray(0, fs.readSync(fd, head, 0, HEAD_BYTES, 0));
  } finally {
    fs.closeSync(fd);
  }
}

/** The demo partner picks the parcel up (confirms it) and answers each interchange. */
function acknowledge(world: World, inParcelId: number, interchanges: Interchange[], ownGrid: number, senderGrid: number): void {
  const p = world.store.parcel(inParcelId);
  if (!p || p.status !== 'InBoxReady') return;
  confirmParcel(world, p);
  for (const ix of interchanges) {
    const ack = acknowledgment(ix, () => world.store.nextId('control', 1), new Date(world.now()));
    if (!ack) continue;
    const content = storeBuffer(world, Buffer.from(ack.content, 'latin1'));
    try {
      deliver(world, { fromMailbox: p.mailbox_id, fileName: ack.fileName, content, gridIdFrom: ownGrid, gridIdTo: senderGrid });
    } catch (err) {
      discardContent(world, content);
      if (!(err instanceof EmulatorError)) throw err;
    }
  }
}

/** Puts small content (injections, acknowledgments) into the content directory. */
export function storeBuffer(world: World, buf: Buffer): StoredContent {
  const name = `tmp-${randomUUID()}`;
  fs.writeFileSync(world.store.contentPath(name), buf);
  return { name, bytes: buf.length, sha256: createHash('sha256').update(buf).digest('hex'), head: buf.subarray(0, HEAD_BYTES) };
}

/** Confirm (idempotent): the inbound parcel → InBoxTransferred, the sender's parcel → OutBoxDelivered. */
export function confirmParcel(world: World, p: ParcelRow): void {
  const now = iso(world.now());
  world.store.db.transaction(() => {
    if (p.status === 'InBoxReady') {
      world.store.db
        .prepare("UPDATE parcels SET status = 'InBoxTransferred', modified = ?, hidden_until = NULL WHERE parcel_id = ?")
        .run(now, p.parcel_id);
      world.store.db
        .prepare("UPDATE interchanges SET status = 'Delivered' WHERE parcel_id IN (?, ?)")
        .run(p.parcel_id, p.peer_parcel_id ?? -1);
    }
    if (p.peer_parcel_id !== null) {
      world.store.db
        .prepare("UPDATE parcels SET status = 'OutBoxDelivered', modified = ? WHERE parcel_id = ? AND status = 'outboxSent'")
        .run(now, p.peer_parcel_id);
    }
  })();
  if (p.status === 'InBoxReady') fireParcelEvent(world, p.mailbox_id, parcelInfo(world.store.parcel(p.parcel_id) as ParcelRow));
}

export function parcelInfo(p: ParcelRow, withStatus = true): Record<string, unknown> {
  return {
    parcelId: p.parcel_id,
    mailboxId: p.mailbox_id,
    networkId: p.network_id,
    fileName: p.file_name,
    bytes: p.bytes,
    ...(withStatus ? { status: p.status } : {}),
    ...(p.grid_id_from !== null ? { gridIdFrom: p.grid_id_from } : {}),
    ...(p.grid_id_to !== null ? { gridIdTo: p.grid_id_to } : {}),
    created: p.created,
    modified: p.modified,
  };
}

/**
 * The download response, streamed: the envelope around a base64 string encoded while it is sent.
 * Content-Length is exact, so a truncated body is detectable by the client.
 */
export function streamDownload(world: World, p: ParcelRow, plan: FaultPlan): (res: ServerResponse) => Promise<void> {
  return async (res) => {
    const declared = plan.wrongBytes ? p.bytes + 1 : p.bytes;
    const prefix = `{"success":true,"errorCode":null,"message":null,"data":{"parcelId":${p.parcel_id},"fileName":${JSON.stringify(p.file_name)},"bytes":${declared},"content":"`;
    const suffix = '"}}';
    const length = Buffer.byteLength(prefix) + base64Length(p.bytes) + suffix.length;
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(length) });
    const breakAt = plan.truncate || plan.resetDuringBody ? Math.floor(length / 2) : Number.POSITIVE_INFINITY;
    let sent = 0;
    const send = async (text: string): Promise<boolean> => {
      if (sent + text.length > breakAt) {
        res.write(text.slice(0, Math.max(0, breakAt - sent)));
        if (plan.resetDuringBody) res.socket?.resetAndDestroy();
        else res.socket?.destroySoon();
        return false;
      }
      sent += text.length;
      if (!res.write(text)) await new Promise((r) => res.once('drain', r));
      return true;
    };
    const encoder = new Base64Encoder();
    if (p.bytes <= SMALL_CONTENT && breakAt === Number.POSITIVE_INFINITY) {
      // One read and one write: the whole response is a few KB. (A body to cut takes the path
      // below, whose separate writes reach the socket before it is cut.)
      const data = fs.readFileSync(world.store.contentPath(p.content));
      if (!(await send(prefix + encoder.push(data) + encoder.end() + suffix))) return;
      res.end();
      return;
    }
    if (!(await send(prefix))) return;
    for await (const chunk of fs.createReadStream(world.store.contentPath(p.content), { highWaterMark: 192 * 1024 })) {
      if (res.destroyed) return;
      if (!(await send(encoder.push(chunk as Buffer)))) return;
    }
    if (!(await send(encoder.end() + suffix))) return;
    res.end();
  };
}
