/**
 * Reading a SOAP answer under the client's limits: the body element of a 200, or the typed error
 * of a fault or of a non-SOAP answer. Every answer is read as it streams and bounded like a REST
 * answer — its bytes (`api.limits.maxBodyBytes`), its elements, its nesting, and its list records
 * (`api.limits.maxListEntries`: records past it are counted, never kept) — so no answer grows an
 * unbounded element tree.
 */
import { maxAnswerValues } from '../answer-shape.js';
import type { ClientLimits } from '../core.js';
import { readLimited } from '../envelope.js';
import { GridApiError, GridLimitError, GridResponseError, GridTransportError } from '../errors.js';
import { toTransportError, type RawResponse } from '../http.js';
import { parseRetryAfter } from '../retry.js';
import type { OperationDef } from '@gridsync/protocol/soap';
import { SoapFaultError } from './errors.js';
import { LIST_ITEM } from './records.js';
import {
  SoapLimitError,
  SoapXmlError,
  child,
  decodeValue,
  isFault,
  readFault,
  readXml,
  soapPayload,
  type ReadOptions,
  type XmlNode,
} from '@gridsync/protocol/soap';

/** A non-SOAP error answer (a proxy page) is read up to this size. */
const MAX_ERROR_BODY = 64 * 1024;

/** The readXml options that hold an answer to the client's limits. */
export function answerBounds(limits: ClientLimits): ReadOptions {
  return {
    maxBytes: limits.maxBodyBytes,
    maxText: limits.maxBodyBytes,
    maxElements: maxAnswerValues(limits),
    list: { item: LIST_ITEM, max: limits.maxListEntries },
  };
}

/** A readXml failure as the client's typed error (`GridLimitError` for a limit, never retried). */
export function readFailure(operation: string, status: number, err: unknown, limits: ClientLimits): Error {
  if (err instanceof SoapLimitError) {
    return err.limit === 'maxBytes'
      ? new GridLimitError(operation, 'api.limits.maxBodyBytes', limits.maxBodyBytes, err.message)
      : new GridLimitError(operation, 'api.limits.maxListEntries', limits.maxListEntries, `${err.message} (derived from the list limit)`);
  }
  if (err instanceof SoapXmlError) {
    if (status !== 200) return new GridApiError(operation, status, null, `unreadable fault: ${err.message}`);
    if (err.truncated) return new GridTransportError(operation, 'TRUNCATED', err.message, false);
    return new GridResponseError(operation, status, err.path, err.message);
  }
  return toTransportError(operation, err);
}

/** Reads a whole (non-streamed) answer: the body element, or the typed error. */
export async function readAnswer(def: OperationDef, res: RawResponse, limits: ClientLimits, now: number): Promise<XmlNode> {
  await refuseNonSoap(def, res, now);
  let root: XmlNode;
  try {
    root = await readXml(res.body, answerBounds(limits));
  } catch (err) {
    res.body.destroy();
    throw readFailure(def.name, res.statusCode, err, limits);
  }
  return checkPayload(def, res.statusCode, root);
}

/** 429, 503, a proxy's page: anything but a 200 or a 500 carrying XML is decided on its HTTP status, as over REST. */
export async function refuseNonSoap(def: OperationDef, res: RawResponse, now: number): Promise<void> {
  const xml = /xml/i.test(String(res.headers['content-type'] ?? ''));
  if (res.statusCode === 200 || (res.statusCode === 500 && xml)) return;
  const { text } = await readLimited(res.body, MAX_ERROR_BODY).catch(() => ({ text: '' }));
  throw new GridApiError(
    def.name,
    res.statusCode,
    null,
    text.replace(/\s+/g, ' ').trim().slice(0, 200),
    parseRetryAfter(res.headers['retry-after'], now),
  );
}

/** The body element of a read envelope, or the fault / the mismatch as a typed error. */
export function checkPayload(def: OperationDef, status: number, root: XmlNode): XmlNode {
  let msg;
  try {
    msg = soapPayload(root);
  } catch (err) {
    if (status !== 200) throw new GridApiError(def.name, status, null, (err as Error).message);
    throw new GridResponseError(def.name, status, (err as SoapXmlError).path ?? '(envelope)', (err as Error).message);
  }
  if (isFault(msg)) throw new SoapFaultError(def.name, readFault(msg));
  if (status !== 200) throw new GridApiError(def.name, status, null, 'HTTP error without a SOAP fault');
  if (msg.payload.name !== `${def.name}Response`)
    throw new GridResponseError(def.name, status, msg.payload.name, `expected ${def.name}Response`);
  return msg.payload;
}

/** The operation's result decoded by its declared type (null for an omitted optional result). */
export function decodeResult(def: OperationDef, payload: XmlNode): unknown {
  const node = child(payload, def.result.name);
  if (!node) {
    if (def.result.min === 1) throw new GridResponseError(def.name, 200, def.result.name, 'missing');
    return null;
  }
  try {
    return decodeValue(node, def.result.type, def.result.name);
  } catch (err) {
    if (err instanceof SoapXmlError) throw new GridResponseError(def.name, 200, err.path, err.message);
    throw err;
  }
}

/** List records the answer held past `api.limits.maxListEntries` (counted while read, not kept). */
export function omittedRecords(def: OperationDef, payload: XmlNode): number {
  const list = child(payload, def.result.name);
  return (list && child(list, 'ParcelIDInfoList')?.omitted) ?? 0;
}
