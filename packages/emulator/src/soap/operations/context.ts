/**
 * What every SOAP operation is given (the call's context) and the checks they share: the caller's
 * authority over a mailbox, parcel or user, read the same way by each operation.
 */
import type { OperationDef } from '@gridsync/protocol/soap';
import { atLeast, canSeeMailbox, type World } from '../../context.js';
import type { StoredContent } from '../../content.js';
import type { ParcelRow, UserRow } from '../../store.js';
import { RET, fault } from '../fault.js';
import type { ParcelIds } from '../records.js';
import type { Caller, SoapSessions } from '../sessions.js';

/** What stays the same from call to call: the endpoint's store, sessions and settings. */
export interface OpEnv {
  readonly world: World;
  readonly sessions: SoapSessions;
  readonly ids: ParcelIds;
  /** Most parcels one ParcelInBox answer lists (the rest on the next call). */
  readonly inboxCap: number;
}

export interface OpContext extends OpEnv {
  readonly op: OperationDef;
  readonly params: Record<string, unknown>;
  /** The body element's children by name, for the lenient aliases (`Email` in place of `LoginName`). */
  readonly raw: ReadonlyMap<string, string>;
  readonly caller: Caller | null;
  /** Decoded `Content`/`ContentBase64` of an upload, already in the content directory. */
  readonly content: StoredContent | undefined;
  readonly ip: string | null;
}

export type OpResult = { readonly result: unknown } | { readonly download: { readonly parcel: ParcelRow; readonly asString: boolean } };
export type Operation = (ctx: OpContext) => OpResult;

export const me = (ctx: OpContext): UserRow => (ctx.caller as Caller).user;
export const ok = (result: unknown): OpResult => ({ result });
export const num = (v: unknown): number => (typeof v === 'number' ? v : Number(v ?? 0));
export const str = (v: unknown): string => (typeof v === 'string' ? v : '');
export const like = (s: unknown): string => `%${str(s)}%`;

export function requireLevel(ctx: OpContext, level: Parameters<typeof atLeast>[1]): void {
  if (!atLeast(me(ctx), level)) throw fault(RET.AccessDenied, `${ctx.op.name} needs ${level} or higher`, 'AuthLevel');
}

/** 0 = the session's mailbox; another tenant's mailbox is access denied (the service's `Ex` rule). */
export function mailboxOf(ctx: OpContext, requested: unknown): number {
  const id = num(requested) === 0 ? me(ctx).mailbox_id : num(requested);
  const exists = ctx.world.store.db.prepare('SELECT 1 FROM mailboxes WHERE mailbox_id = ?').get(id) !== undefined;
  if (!exists) throw fault(RET.NotFound, `Mailbox ${id} not found`, 'MailboxID');
  if (!canSeeMailbox(ctx.world, me(ctx), id)) throw fault(RET.AccessDenied, `No authority over mailbox ${id}`, 'MailboxID');
  return id;
}

/** The mailboxes a list covers: one, or with `-1` every mailbox the caller may see. */
export function mailboxesOf(ctx: OpContext, requested: unknown): number[] {
  if (num(requested) !== -1) return [mailboxOf(ctx, requested)];
  const all = ctx.world.store.db.prepare('SELECT mailbox_id FROM mailboxes ORDER BY mailbox_id').all() as { mailbox_id: number }[];
  return all.map((m) => m.mailbox_id).filter((id) => canSeeMailbox(ctx.world, me(ctx), id));
}

export function parcelOf(ctx: OpContext, direction?: 'in' | 'out'): ParcelRow {
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

export function user(ctx: OpContext, id: unknown): UserRow {
  const u = ctx.world.store.user(num(id) || me(ctx).user_id);
  if (!u || !canSeeMailbox(ctx.world, me(ctx), u.mailbox_id)) throw fault(RET.NotFound, `User ${num(id)} not found`, 'UserID');
  return u;
}

/** Reading or changing another user's key or details needs NetworkAdmin (MailboxAdmin within the own mailbox). */
export function mayManage(ctx: OpContext, u: UserRow): void {
  const c = me(ctx);
  if (u.user_id === c.user_id || atLeast(c, 'NetworkAdmin') || (atLeast(c, 'MailboxAdmin') && u.mailbox_id === c.mailbox_id)) return;
  throw fault(RET.AccessDenied, `No authority over user ${u.user_id}`, 'UserID');
}
