/**
 * Tolerant decoding of the records the pipelines act on. The rule (docs/validation.md): a field
 * gridsync acts on — a parcel id, a declared byte count, the content, a status a decision depends
 * on — is checked strictly and a bad one stops that item with a typed error; every other field may
 * be missing, null, of another form or unknown, which is never fatal and is logged once per
 * endpoint and field.
 */
import { ConfirmNotTakenError, GridResponseError } from './errors.js';
import type { ParcelSummary, SessionContext } from './transport.js';
import { ParcelStatus } from '@gridsync/protocol/wire';

export interface ShapeLogger {
  warn(obj: object, msg: string): void;
}

/** Remembers which endpoint+field pairs were already reported, so each is logged once. */
export class ShapeWarnings {
  private readonly seen = new Set<string>();

  constructor(private readonly logger?: ShapeLogger) {}

  note(endpoint: string, field: string, detail: string): void {
    const key = `${endpoint} ${field}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.logger?.warn({ endpoint, field, detail }, 'the service sent a field in a form gridsync does not expect; ignored (reported once)');
  }
}

/** A record the daemon cannot act on: it is reported with this error, never silently skipped. */
export interface UnreadableRecord {
  readonly error: GridResponseError;
  /** Whatever could be read of it, for the operator. */
  readonly fileName?: string;
  readonly roughId?: string;
}

const KNOWN_STATUSES = new Set<string>(ParcelStatus.options);
const DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/;

type IdResult = { ok: true; value: number } | { ok: false; detail: string };

/**
 * A 64-bit id as gridsync can address it: a positive integer up to 2^53 - 1, as a JSON number or
 * a decimal string. JSON numbers beyond that arrive already rounded, so they are refused, never
 * used (a rounded id would name another parcel).
 */
export function readId(v: unknown): IdResult {
  if (typeof v === 'number') {
    if (!Number.isInteger(v) || v <= 0) return { ok: false, detail: `not a positive integer: ${v}` };
    if (!Number.isSafeInteger(v)) return { ok: false, detail: `id ${v} is above 2^53 and cannot be addressed exactly` };
    return { ok: true, value: v };
  }
  if (typeof v === 'string' && /^\d{1,20}$/.test(v)) {
    const n = Number(v);
    if (n > 0 && Number.isSafeInteger(n)) return { ok: true, value: n };
    return { ok: false, detail: `id ${v} is above 2^53 and cannot be addressed exactly` };
  }
  return { ok: false, detail: v === undefined || v === null ? 'missing' : `not an id: ${JSON.stringify(v)?.slice(0, 40)}` };
}

/** A declared byte count: a non-negative integer (or its decimal string). undefined = absent; null = unreadable. */
export function readByteCount(v: unknown): number | undefined | null {
  if (v === undefined || v === null) return undefined;
  const n = typeof v === 'string' && /^\d{1,16}$/.test(v) ? Number(v) : v;
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 ? n : null;
}

function optionalInt(endpoint: string, field: string, v: unknown, warn: ShapeWarnings): number | undefined {
  if (v === undefined || v === null) return undefined;
  const n = typeof v === 'string' && /^-?\d{1,15}$/.test(v) ? Number(v) : v;
  if (typeof n === 'number' && Number.isSafeInteger(n)) return n;
  warn.note(endpoint, field, `expected an integer, got ${JSON.stringify(v)?.slice(0, 40)}`);
  return undefined;
}

function optionalString(endpoint: string, field: string, v: unknown, warn: ShapeWarnings): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return v;
  warn.note(endpoint, field, `expected a string, got ${typeof v}`);
  return undefined;
}

/** A parcel status: a string (unknown values kept, reported once), or the legacy `{ code, … }` object. */
function readStatus(endpoint: string, field: string, v: unknown, warn: ShapeWarnings): string | undefined {
  if (v === undefined || v === null) return undefined;
  let s: unknown = v;
  if (typeof v === 'object' && typeof (v as { code?: unknown }).code === 'string') {
    warn.note(endpoint, field, 'status sent as an object; its code is used');
    s = (v as { code: string }).code;
  }
  if (typeof s !== 'string') {
    warn.note(endpoint, field, `expected a status string, got ${typeof v}`);
    return undefined;
  }
  if (!KNOWN_STATUSES.has(s))
    warn.note(
      endpoint,
      `${field}=${s}`,
      `unknown status value ${JSON.stringify(s)}: kept as is, treated as none of the statuses gridsync acts on`,
    );
  return s;
}

/**
 * A record of a list asked for one mailbox must be that mailbox's when it says whose it is (not
 * saying, or 0, is tolerated). A service that ignores the filter, an account that sees several
 * mailboxes or a proxy that mixes answers would otherwise have another mailbox's parcel placed
 * here and confirmed away from its owner, or its upload taken for one of ours whose answer was
 * lost — our file archived as sent, never delivered. REST and SOAP records both go through here.
 */
export function checkOwnMailbox(endpoint: string, field: string, stated: unknown, asked: number): void {
  if (stated === undefined || stated === null || stated === 0 || stated === '0' || stated === asked) return;
  if (typeof stated === 'string' && /^\d{1,15}$/.test(stated) && Number(stated) === asked) return;
  throw new GridResponseError(endpoint, 200, field, `a record of mailbox ${JSON.stringify(stated)?.slice(0, 40)}, asked for ${asked}`);
}

/** The mailbox a record names: a positive integer or its decimal string; 0, absent or anything else names none. */
export function statedMailbox(v: unknown): number | undefined {
  const n = typeof v === 'string' && /^\d{1,15}$/.test(v) ? Number(v) : v;
  return typeof n === 'number' && Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

/**
 * One parcel record of a list or lookup. Throws GridResponseError when the parcel id or the
 * declared byte count cannot be read, or when the record is another mailbox's than `mailboxId`
 * (a list's); everything else is best effort.
 */
export function decodeParcel(endpoint: string, at: string, value: unknown, warn: ShapeWarnings, mailboxId?: number): ParcelSummary {
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new GridResponseError(endpoint, 200, at, 'not a parcel record');
  const r = value as Record<string, unknown>;
  const id = readId(r.parcelId);
  if (!id.ok) throw new GridResponseError(endpoint, 200, `${at}.parcelId`, id.detail);
  if (mailboxId !== undefined) checkOwnMailbox(endpoint, `${at}.mailboxId`, r.mailboxId, mailboxId);
  let bytesField = 'bytes';
  let raw = r.bytes;
  if (raw === undefined && r.size !== undefined) {
    warn.note(endpoint, `${at.replace(/\[\d+\]/, '[]')}.size`, 'byte count sent as `size`; used as `bytes`');
    bytesField = 'size';
    raw = r.size;
  }
  const bytes = readByteCount(raw);
  if (bytes === null)
    throw new GridResponseError(endpoint, 200, `${at}.${bytesField}`, `not a byte count: ${JSON.stringify(raw)?.slice(0, 40)}`);
  const f = (name: string): string => `${at.replace(/\[\d+\]/, '[]')}.${name}`;
  const fileName = optionalString(endpoint, f('fileName'), r.fileName, warn);
  const gridIdFrom = optionalInt(endpoint, f('gridIdFrom'), r.gridIdFrom, warn);
  const gridIdTo = optionalInt(endpoint, f('gridIdTo'), r.gridIdTo, warn);
  let created = optionalString(endpoint, f('created'), r.created, warn);
  if (created !== undefined && !DATE.test(created)) {
    warn.note(endpoint, f('created'), `not an ISO 8601 datetime: ${created.slice(0, 40)}`);
    created = undefined;
  }
  const status = readStatus(endpoint, f('status'), r.status, warn);
  return {
    parcelId: id.value,
    fileName: fileName ?? null,
    ...(bytes !== undefined ? { bytes } : {}),
    ...(gridIdFrom !== undefined ? { gridIdFrom } : {}),
    ...(gridIdTo !== undefined ? { gridIdTo } : {}),
    ...(created !== undefined ? { created } : {}),
    ...(status !== undefined ? { status } : {}),
  };
}

/** A list of parcel records asked for `mailboxId`: the readable ones, and each unreadable one with its error. */
export function decodeParcelList(
  endpoint: string,
  data: unknown,
  warn: ShapeWarnings,
  mailboxId: number,
): { parcels: ParcelSummary[]; unreadable: UnreadableRecord[] } {
  if (!Array.isArray(data))
    throw new GridResponseError(endpoint, 200, 'data', `expected a list of parcels, got ${data === null ? 'null' : typeof data}`);
  const parcels: ParcelSummary[] = [];
  const unreadable: UnreadableRecord[] = [];
  data.forEach((value, i) => {
    try {
      parcels.push(decodeParcel(endpoint, `data[${i}]`, value, warn, mailboxId));
    } catch (err) {
      if (!(err instanceof GridResponseError)) throw err;
      const r = (value && typeof value === 'object' ? value : {}) as Record<string, unknown>;
      unreadable.push({
        error: err,
        ...(typeof r.fileName === 'string' ? { fileName: r.fileName } : {}),
        ...(r.parcelId !== undefined ? { roughId: String(r.parcelId) } : {}),
      });
    }
  });
  return { parcels, unreadable };
}

/** The session's context; only `mailboxId` is acted on (and only when the config names none). */
export function decodeSession(endpoint: string, data: unknown, warn: ShapeWarnings): SessionContext {
  const r = (data && typeof data === 'object' ? data : {}) as Record<string, unknown>;
  if (!data || typeof data !== 'object') warn.note(endpoint, 'data', `expected an object, got ${data === null ? 'null' : typeof data}`);
  const mailboxId = optionalInt(endpoint, 'data.mailboxId', r.mailboxId, warn);
  const userId = optionalInt(endpoint, 'data.userId', r.userId, warn);
  const login = optionalString(endpoint, 'data.login', r.login, warn);
  return {
    ...(mailboxId !== undefined ? { mailboxId } : {}),
    ...(userId !== undefined ? { userId } : {}),
    ...(login !== undefined ? { login } : {}),
  };
}

/**
 * A grid ID's record as far as `{partner}` needs it: its description, trimmed; undefined when it
 * has none. Strict only on the identity: a record of another grid ID must not name this one.
 */
export function decodePartnerName(endpoint: string, gridId: number, data: unknown, warn: ShapeWarnings): string | undefined {
  if (!data || typeof data !== 'object' || Array.isArray(data))
    throw new GridResponseError(endpoint, 200, 'data', `expected a grid ID record, got ${data === null ? 'null' : typeof data}`);
  const r = data as Record<string, unknown>;
  const id = optionalInt(endpoint, 'data.gridId', r.gridId, warn);
  if (id !== undefined && id !== gridId) throw new GridResponseError(endpoint, 200, 'data.gridId', `asked for ${gridId}, got ${id}`);
  const description = optionalString(endpoint, 'data.description', r.description, warn)?.trim();
  return description ? description : undefined;
}

/** Upload's answer: the new parcel id, bare or inside an object. Strict: without it the outcome is unknown. */
export function decodeUploadResult(endpoint: string, data: unknown, warn: ShapeWarnings): number {
  let v = data;
  if (data && typeof data === 'object' && !Array.isArray(data)) {
    warn.note(endpoint, 'data', 'parcel id sent inside an object');
    v = (data as Record<string, unknown>).parcelId;
  }
  const id = readId(v);
  if (!id.ok) throw new GridResponseError(endpoint, 200, typeof data === 'object' && data !== null ? 'data.parcelId' : 'data', id.detail);
  return id.value;
}

/**
 * The status that proves a confirm: `InBoxArchived`. `InBoxTransferred` is what a download leaves
 * (the service's documentation), so a parcel showing it is not confirmed yet.
 */
export const CONFIRMED_STATUS = 'InBoxArchived';

/**
 * Confirm's answer. `true` or null (tolerated, noted) mean done; an object counts only when it is
 * about this parcel and does not show it still waiting; `false` (a legacy answer) does not count.
 */
export function decodeConfirmResult(endpoint: string, parcelId: number, data: unknown, warn: ShapeWarnings): void {
  if (data === false) throw new ConfirmNotTakenError(endpoint, parcelId, 'the service answered false');
  if (data === true) return;
  if (data && typeof data === 'object' && !Array.isArray(data)) {
    const r = data as Record<string, unknown>;
    if (r.parcelId !== undefined && r.parcelId !== null) {
      const id = readId(r.parcelId);
      if (!id.ok || id.value !== parcelId)
        throw new ConfirmNotTakenError(endpoint, parcelId, `the answer is about parcel ${String(r.parcelId).slice(0, 40)}`);
    }
    if (r.status === 'InBoxReady') throw new ConfirmNotTakenError(endpoint, parcelId, 'the answer shows it still InBoxReady');
    return;
  }
  warn.note(endpoint, 'data', `expected true, got ${data === null ? 'null' : typeof data}; success is taken as confirmed`);
}
