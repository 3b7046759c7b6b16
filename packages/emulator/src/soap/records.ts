/**
 * The emulator's rows as SOAP records (field names and types from the one SOAP definition). The
 * REST-only details have no SOAP element and are left out; the SOAP-only ones get neutral values.
 */
import type { World } from '../context.js';
import { levelOf } from '../context.js';
import type { GridIdRow, InterchangeRow, InterconnectRow, MailboxRow, NetworkRow, ParcelRow, UserRow } from '../store.js';

/**
 * Parcel ids as the SOAP side shows them. With `idOffset` (a test switch) every id is shifted by
 * that amount, so ids beyond 2^53 travel through the non-upload operations.
 */
export class ParcelIds {
  constructor(private readonly offset: bigint) {}
  out(id: number): string {
    return (BigInt(id) + this.offset).toString();
  }
  in(id: unknown): number {
    const v = BigInt(String(id ?? '0')) - this.offset;
    return v < 0n || v > BigInt(Number.MAX_SAFE_INTEGER) ? -1 : Number(v);
  }
}

const mailbox = (world: World, id: number | null | undefined): MailboxRow | undefined =>
  id === null || id === undefined
    ? undefined
    : (world.store.db.prepare('SELECT * FROM mailboxes WHERE mailbox_id = ?').get(id) as MailboxRow | undefined);
const network = (world: World, id: number | undefined): NetworkRow | undefined =>
  id === undefined ? undefined : (world.store.db.prepare('SELECT * FROM networks WHERE network_id = ?').get(id) as NetworkRow | undefined);

export function gridRecord(world: World, g: GridIdRow): Record<string, unknown> {
  return {
    GridID: g.grid_id,
    NetworkID: g.network_id,
    NetworkName: network(world, g.network_id)?.company_name,
    MailboxID: g.mailbox_id,
    MailboxName: mailbox(world, g.mailbox_id)?.company_name,
    Qualifier: g.qualifier,
    ID: g.id,
    Description: g.description,
    MailboxDefault: false,
    Status: ['Active', 'Suspended', 'Terminated'].includes(g.status) ? g.status : 'Pending',
    UseType: 'Production',
  };
}

const standardOf = (s: string): string =>
  ['X12', 'EDIFACT', 'TRADACOMS', 'VDA', 'XML', 'TXT', 'PDF', 'Binary', 'PEPPOL'].includes(s) ? s : 'Binary';

export function interchangeRecord(world: World, r: InterchangeRow, p?: ParcelRow): Record<string, unknown> {
  const parcel = p ?? world.store.parcel(r.parcel_id);
  const from = parcel?.grid_id_from != null ? world.store.gridId(parcel.grid_id_from) : undefined;
  const to = parcel?.grid_id_to != null ? world.store.gridId(parcel.grid_id_to) : undefined;
  return {
    InterchangeID: r.interchange_id,
    InterchangeProcessDate: r.created,
    NetworkIDFrom: from?.network_id ?? 0,
    MailboxIDFrom: from?.mailbox_id ?? 0,
    NetworkIDTo: to?.network_id ?? 0,
    MailboxIDTo: to?.mailbox_id ?? 0,
    Standard: standardOf(r.standard),
    Bytes: parcel?.bytes ?? 0,
    InterchangeControlID: r.control_number,
    InterchangeDateTime: r.created,
    ArchiveDate: null,
    StatusDate: r.created,
    StatusCode: r.status,
    DocumentType: r.document_type,
    Header: r.header,
    ...(from ? { TPFrom: gridRecord(world, from) } : {}),
    ...(to ? { TPTo: gridRecord(world, to) } : {}),
  };
}

export function parcelRecord(world: World, ids: ParcelIds, p: ParcelRow): Record<string, unknown> {
  const own = mailbox(world, p.mailbox_id);
  const peer = p.peer_parcel_id !== null ? world.store.parcel(p.peer_parcel_id) : undefined;
  const other = mailbox(world, peer?.mailbox_id);
  const [fromMb, toMb] = p.direction === 'in' ? [other, own] : [own, other];
  const interchanges = world.store.db
    .prepare('SELECT * FROM interchanges WHERE parcel_id = ? ORDER BY interchange_id')
    .all(p.parcel_id) as InterchangeRow[];
  return {
    ParcelBytes: p.bytes,
    ParcelDate: p.created,
    ActualBytes: p.bytes,
    NetworkIDFrom: fromMb?.network_id ?? 0,
    NetworkNameFrom: network(world, fromMb?.network_id)?.company_name,
    MailboxIDFrom: fromMb?.mailbox_id ?? 0,
    MailboxNameFrom: fromMb?.company_name,
    NetworkIDTo: toMb?.network_id ?? 0,
    NetworkNameTo: network(world, toMb?.network_id)?.company_name,
    MailboxIDTo: toMb?.mailbox_id ?? 0,
    MailboxNameTo: toMb?.company_name,
    FileName: p.file_name,
    MailbagControlID: p.mailbag_control_id,
    ArchiveDate: null,
    StatusDate: p.modified,
    StatusCode: p.status,
    LocalStatus: 0,
    LocalStatusDate: null,
    Valid: 'Valid',
    Direction: p.direction === 'in' ? 'InBox' : 'OutBox',
    ...(interchanges.length > 0 ? { Interchanges: interchanges.map((r) => interchangeRecord(world, r, p)) } : {}),
    ParcelID: ids.out(p.parcel_id),
  };
}

/** A ParcelIDInfoCollection of one page. */
export function collection(
  world: World,
  ids: ParcelIds,
  rows: ParcelRow[],
  total: number,
  pageNo: number,
  perPage: number,
): Record<string, unknown> {
  return {
    PageSize: perPage,
    PageNumber: pageNo,
    Count: rows.length,
    TotalRecords: total,
    TotalPages: perPage > 0 ? Math.ceil(total / perPage) : 1,
    ...(rows.length > 0 ? { ParcelIDInfoList: rows.map((p) => parcelRecord(world, ids, p)) } : {}),
  };
}

export const networkRecord = (n: NetworkRow): Record<string, unknown> => ({
  NetworkID: n.network_id,
  Name: n.company_name,
  UniqueID: n.unique_id,
  Status: n.status,
  CreateDate: n.created,
});
export const mailboxRecord = (m: MailboxRow): Record<string, unknown> => ({
  MailboxID: m.mailbox_id,
  NetworkID: m.network_id,
  Name: m.company_name,
  UniqueID: m.unique_id,
  Status: m.status,
  CreateDate: m.created,
});
export const userRecord = (u: UserRow): Record<string, unknown> => ({
  UserID: u.user_id,
  LoginName: u.login,
  FirstName: u.first_name,
  LastName: u.last_name,
  EMail: u.email,
  AuthLevel: levelOf(u),
  NetworkID: u.network_id,
  MailboxID: u.mailbox_id,
  Status: u.status === 'Active' ? 'Active' : 'Suspended',
});
export const interconnectRecord = (i: InterconnectRow): Record<string, unknown> => ({
  InterconnectID: i.interconnect_id,
  GridID1: i.grid_id_from,
  GridID2: i.grid_id_to,
  Status: i.status === 'Active' ? 'Active' : i.status === 'Pending' ? 'Pending' : 'Cancelled',
  CreateDate: i.created,
  StatusDate: i.modified,
});
