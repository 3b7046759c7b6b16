/**
 * Parcel records of the SOAP answers as the pipelines see them (ParcelSummary). Parcel ids are
 * exact decimal strings on the wire side; the journal gets numbers, and an id beyond 2^53 is
 * refused rather than rounded.
 */
import { GridResponseError } from '../errors.js';
import { checkOwnMailbox } from '../tolerant.js';
import type { ParcelSummary } from '../transport.js';

export type Rec = Record<string, unknown>;

/** The list element of the parcel collections, and its records. */
export const LIST_ITEM = 'ParcelIDInfo';

/** A parcel id from the wire (exact decimal) as the number the journal keeps. */
export function journalId(operation: string, value: unknown): number {
  const s = String(value ?? '');
  const n = Number(s);
  if (!/^\d+$/.test(s) || !Number.isSafeInteger(n))
    throw new GridResponseError(operation, 200, 'ParcelID', `${s} is not a parcel id gridsync can journal exactly (above 2^53)`);
  return n;
}

/** Whose a record of a list is: the receiving mailbox in an inbox, the sending one in an outbox. */
export interface ListedFor {
  readonly field: 'MailboxIDTo' | 'MailboxIDFrom';
  readonly mailboxId: number;
}

/** A parcel record; one of a list (`listedFor`) must be that mailbox's when it says whose it is. */
export function summary(operation: string, r: Rec, listedFor?: ListedFor): ParcelSummary {
  if (listedFor) checkOwnMailbox(operation, listedFor.field, r[listedFor.field], listedFor.mailboxId);
  const ix = (r.Interchanges as Rec[] | undefined)?.[0];
  const from = (ix?.TPFrom as Rec | undefined)?.GridID;
  const to = (ix?.TPTo as Rec | undefined)?.GridID;
  return {
    parcelId: journalId(operation, r.ParcelID),
    fileName: typeof r.FileName === 'string' ? r.FileName : null,
    ...(typeof r.ParcelBytes === 'number' ? { bytes: r.ParcelBytes } : {}),
    ...(typeof from === 'number' && from > 0 ? { gridIdFrom: from } : {}),
    ...(typeof to === 'number' && to > 0 ? { gridIdTo: to } : {}),
    ...(typeof r.ParcelDate === 'string' ? { created: r.ParcelDate } : {}),
    ...(typeof r.StatusCode === 'string' ? { status: r.StatusCode } : {}),
  };
}

/** The records of a parcel collection (nil records dropped). */
export const list = (collection: unknown): Rec[] =>
  ((collection as Rec | null)?.ParcelIDInfoList as Rec[] | undefined)?.filter((p): p is Rec => p !== null) ?? [];
