/**
 * The parcel lifecycle of docs/wire.md#inbound-states over the store: delivery (routing over an Active
 * interconnect into the receiver's inbox, carbon copies, the interchanges inside), confirm, and the
 * demo partner's acknowledgments. The content files themselves: content.ts.
 */
import fs from 'node:fs';
import { fireParcelEvent } from './callbacks.js';
import { discardContent, readHead, storeBuffer, type StoredContent } from './content.js';
import { acknowledgment, parseInterchanges, startsLikeEdi, type Interchange, type Party } from './edi.js';
import { EmulatorError, invalidParameter, iso, type World } from './context.js';
import type { ParcelRow } from './store.js';

/** Parcel content parsed for interchanges only up to this size. */
const INTERCHANGE_SCAN_LIMIT = 8 * 1024 * 1024;

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
    // The sender's and the receiver's parcel share the file, its routing and its time; each names the other as peer.
    const insertSide = (id: number, mailboxId: number, networkId: number, direction: 'in' | 'out', status: string, peer: number | null) =>
      insert.run(
        id,
        mailboxId,
        networkId,
        direction,
        status,
        d.fileName,
        d.content.bytes,
        d.content.sha256,
        d.gridIdFrom,
        d.gridIdTo,
        iso(now),
        now,
        iso(now),
        contentName,
        peer,
      );
    if (outParcelId !== null && d.fromMailbox !== null) {
      const sender = store.db.prepare('SELECT network_id FROM mailboxes WHERE mailbox_id = ?').get(d.fromMailbox) as { network_id: number };
      insertSide(outParcelId, d.fromMailbox, sender.network_id, 'out', 'outboxSent', inParcelId);
    }
    insertSide(inParcelId, toMailbox, receiver.network_id, 'in', 'InBoxReady', outParcelId);
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
