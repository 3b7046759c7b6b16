/**
 * XML of the SOAP interface, both directions, driven by the definitions in schema.ts: writing
 * values in element order (required elements always present), finding the payload and the fault
 * of a message read by xml-read.ts, and decoding its element tree by element name (unknown
 * elements ignored, order not relied upon).
 */
import { SOAP11_ENV, SOAP12_ENV, SOAP_NS, typeDef, isPrimitive, zeroOf, type FieldDef, type OperationDef } from './schema.js';
import { SoapXmlError } from './xml-error.js';
import type { XmlNode } from './xml-read.js';

export { SoapXmlError } from './xml-error.js';
export { SoapLimitError, readXml } from './xml-read.js';
export type { ReadOptions, XmlNode } from './xml-read.js';

export type SoapVersion = '1.1' | '1.2';

// ------------------------------------------------------------------ writing

export interface WriteOptions {
  /**
   * `z`: `2026-05-07T08:00:00Z` (the emulator). `naked`: `2026-05-07T08:00:00`, UTC without an
   * offset (the client: the service's platform may move a value with an offset into its own zone).
   */
  readonly dates: 'z' | 'naked';
}

const MIN_DATE = '0001-01-01T00:00:00';
// Characters XML 1.0 cannot carry at all (not even escaped).
const NOT_XML =
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

export function escapeText(s: string): string {
  return s.replace(NOT_XML, '\uFFFD').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\r/g, '&#13;');
}

function formatDate(v: unknown, opts: WriteOptions): string {
  if (v === null || v === undefined || v === '') return MIN_DATE;
  const ms = v instanceof Date ? v.getTime() : typeof v === 'number' ? v : parseDate(String(v));
  if (ms === null || Number.isNaN(ms)) return MIN_DATE;
  const iso = new Date(ms).toISOString().replace(/\.000Z$/, 'Z');
  return opts.dates === 'z' ? iso : iso.replace(/Z$/, '');
}

function formatPrimitive(type: string, v: unknown, opts: WriteOptions): string {
  switch (type) {
    case 'boolean':
      return v === true || v === 'true' || v === 1 || v === '1' ? 'true' : 'false';
    case 'dateTime':
      return formatDate(v, opts);
    case 'int':
    case 'short':
    case 'long':
    case 'float': {
      const s = v === null || v === undefined || v === '' ? '0' : String(v);
      if (!/^-?\d+(\.\d+)?(e[-+]?\d+)?$/i.test(s)) throw new SoapXmlError(`not a number: ${JSON.stringify(s).slice(0, 40)}`, type);
      return s;
    }
    default:
      return escapeText(String(v));
  }
}

/** Marks where streamed content goes: `writeOperation` splits the text around it. */
export const STREAM_SLOT = '\u0000stream\u0000';

/** Appends `<name>value</name>` (or nothing, for an omitted optional element) to `out`. */
export function writeField(out: string[], field: FieldDef, value: unknown, opts: WriteOptions): void {
  const { name, type } = field;
  if (value === STREAM_SLOT) {
    out.push(`<${name}>`, STREAM_SLOT, `</${name}>`);
    return;
  }
  if (value === undefined || value === null) {
    if (field.min === 0) return;
    value = zeroOf(type);
  }
  if (isPrimitive(type)) {
    out.push(`<${name}>`, formatPrimitive(type, value, opts), `</${name}>`);
    return;
  }
  const t = typeDef(type);
  if (t.kind === 'enum') {
    const s = value === null || value === undefined ? t.values[0] : String(value);
    out.push(`<${name}>`, escapeText(s ?? ''), `</${name}>`);
    return;
  }
  if (t.kind === 'array') {
    out.push(`<${name}>`);
    for (const item of value as unknown[]) {
      if (item === null || item === undefined)
        out.push(`<${t.item} xsi:nil="true" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" />`);
      else writeField(out, { name: t.item, type: t.item, min: 1 }, item, opts);
    }
    out.push(`</${name}>`);
    return;
  }
  const rec = value as Record<string, unknown>;
  out.push(`<${name}>`);
  for (const f of t.fields) writeField(out, f, rec[f.name], opts);
  out.push(`</${name}>`);
}

export function envelope(version: SoapVersion, body: string): string {
  const ns = version === '1.1' ? SOAP11_ENV : SOAP12_ENV;
  return (
    `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" ` +
    `xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:soap="${ns}"><soap:Body>${body}</soap:Body></soap:Envelope>`
  );
}

/** A request envelope: `<Op xmlns="ns">` with the parameters in order. */
export function writeRequest(op: OperationDef, params: Record<string, unknown>, version: SoapVersion = '1.1'): string {
  const out: string[] = [`<${op.name} xmlns="${SOAP_NS}">`];
  for (const p of op.params) writeField(out, p, params[p.name], { dates: 'naked' });
  out.push(`</${op.name}>`);
  return envelope(version, out.join(''));
}

/** A response envelope: `<OpResponse xmlns="ns"><OpResult>…`. */
export function writeResponse(op: OperationDef, result: unknown, version: SoapVersion, elementName = op.name): string {
  const out: string[] = [`<${elementName}Response xmlns="${SOAP_NS}">`];
  writeField(out, { ...op.result, name: `${elementName}Result` }, result, { dates: 'z' });
  out.push(`</${elementName}Response>`);
  return envelope(version, out.join(''));
}

export interface FaultFields {
  /** `Client`: the caller's fault; `Server`: ours (may be transient). */
  readonly faultCode: 'Client' | 'Server';
  readonly message: string;
  readonly errorCode: number;
  readonly errorString?: string;
  readonly errorItem?: string;
  readonly errorMessage?: string;
}

/** A fault with both detail elements: `ErrorInfo` first (what the vendor's clients read), then `GridOSSOAPErrorCode`. */
export function writeFault(version: SoapVersion, f: FaultFields): string {
  const info =
    `<ErrorInfo xmlns=""><ErrorCode>${f.errorCode}</ErrorCode><ErrorString>${escapeText(f.errorString ?? f.message)}</ErrorString>` +
    `<ErrorItem>${escapeText(f.errorItem ?? '')}</ErrorItem><ErrorMessage>${escapeText(f.errorMessage ?? '')}</ErrorMessage></ErrorInfo>` +
    `<GridOSSOAPErrorCode xmlns="">${f.errorCode}</GridOSSOAPErrorCode>`;
  if (version === '1.1') {
    return envelope(
      version,
      `<soap:Fault><faultcode>soap:${f.faultCode}</faultcode><faultstring>${escapeText(f.message)}</faultstring><detail>${info}</detail></soap:Fault>`,
    );
  }
  const code = f.faultCode === 'Client' ? 'Sender' : 'Receiver';
  return envelope(
    version,
    `<soap:Fault><soap:Code><soap:Value>soap:${code}</soap:Value></soap:Code><soap:Reason><soap:Text xml:lang="en">${escapeText(f.message)}</soap:Text></soap:Reason>` +
      `<soap:Detail>${info}</soap:Detail></soap:Fault>`,
  );
}

// ------------------------------------------------------------------ reading
export interface SoapMessage {
  readonly version: SoapVersion;
  /** The first element inside Body. */
  readonly payload: XmlNode;
}

/** Finds Envelope/Body/<payload>, namespace-aware (any prefix). */
export function soapPayload(root: XmlNode): SoapMessage {
  const version = root.ns === SOAP11_ENV ? '1.1' : root.ns === SOAP12_ENV ? '1.2' : undefined;
  if (root.name !== 'Envelope' || !version)
    throw new SoapXmlError(`not a SOAP envelope: <${root.name}> in ${JSON.stringify(root.ns)}`, '(envelope)');
  const body = root.children.find((c) => c.name === 'Body' && c.ns === root.ns);
  if (!body) throw new SoapXmlError('no Body', 'Envelope');
  const payload = body.children[0];
  if (!payload) throw new SoapXmlError('empty Body', 'Envelope/Body');
  return { version, payload };
}

export const child = (node: XmlNode, name: string): XmlNode | undefined => node.children.find((c) => c.name === name);

export interface ParsedFault extends FaultFields {
  readonly soapVersion: SoapVersion;
  /** The fault code's own text, e.g. `soap:Client`. */
  readonly rawCode: string;
  /** False when the detail carried no numeric code. */
  readonly hasErrorCode: boolean;
}

export function isFault(msg: SoapMessage): boolean {
  return msg.payload.name === 'Fault' && msg.payload.ns === (msg.version === '1.1' ? SOAP11_ENV : SOAP12_ENV);
}

/** Reads both fault forms; the numeric code from ErrorInfo/ErrorCode, else GridOSSOAPErrorCode. */
export function readFault(msg: SoapMessage): ParsedFault {
  const f = msg.payload;
  let rawCode: string;
  let message: string;
  let detail: XmlNode | undefined;
  if (msg.version === '1.1') {
    rawCode = child(f, 'faultcode')?.text.trim() ?? '';
    message = child(f, 'faultstring')?.text.trim() ?? '';
    detail = child(f, 'detail');
  } else {
    const code = child(f, 'Code');
    rawCode = (code && child(code, 'Value')?.text.trim()) ?? '';
    const reason = child(f, 'Reason');
    message = (reason && child(reason, 'Text')?.text.trim()) ?? '';
    detail = child(f, 'Detail');
  }
  const local = rawCode.replace(/^.*:/, '');
  const faultCode: 'Client' | 'Server' = local === 'Server' || local === 'Receiver' ? 'Server' : 'Client';
  const info = detail ? child(detail, 'ErrorInfo') : undefined;
  const codeText = (info && child(info, 'ErrorCode')?.text.trim()) || (detail && child(detail, 'GridOSSOAPErrorCode')?.text.trim()) || '';
  const hasErrorCode = /^-?\d+$/.test(codeText);
  return {
    soapVersion: msg.version,
    rawCode,
    faultCode,
    message,
    errorCode: hasErrorCode ? Number(codeText) : -1,
    hasErrorCode,
    ...(info && child(info, 'ErrorString') ? { errorString: child(info, 'ErrorString')?.text ?? '' } : {}),
    ...(info && child(info, 'ErrorItem') ? { errorItem: child(info, 'ErrorItem')?.text ?? '' } : {}),
    ...(info && child(info, 'ErrorMessage') ? { errorMessage: child(info, 'ErrorMessage')?.text ?? '' } : {}),
  };
}

// ------------------------------------------------------------------ decoding

/**
 * Any of the platform's date forms: with or without an offset, 0–7 fractional digits. No offset =
 * UTC. Returns epoch ms, or null for the platform's "not set" (year 1) and for unreadable text.
 */
export function parseDate(text: string): number | null {
  const m = /^\s*(-?\d{4,})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)?\s*$/.exec(text);
  if (!m) return null;
  const [, y, mo, d, h, mi, s, frac, tz] = m as unknown as string[];
  if (Number(y) <= 1) return null;
  const base = Date.UTC(
    Number(y),
    Number(mo) - 1,
    Number(d),
    Number(h),
    Number(mi),
    Number(s),
    frac ? Math.floor(Number(`0.${frac}`) * 1000) : 0,
  );
  if (!tz || tz === 'Z') return base;
  const sign = tz.startsWith('-') ? -1 : 1;
  return base - sign * (Number(tz.slice(1, 3)) * 60 + Number(tz.slice(4, 6))) * 60_000;
}

export interface DecodeOptions {
  /** Fill omitted required elements with their zero (how the service reads requests). */
  readonly fillDefaults?: boolean;
}

function decodePrimitive(type: string, text: string, path: string): unknown {
  const t = text.trim();
  switch (type) {
    case 'int':
    case 'short': {
      if (!/^[-+]?\d+$/.test(t)) throw new SoapXmlError(`not an integer: ${JSON.stringify(t.slice(0, 40))}`, path);
      const n = Number(t);
      const limit = type === 'short' ? 32_768 : 2 ** 31;
      if (n < -limit || n >= limit) throw new SoapXmlError(`out of range for ${type}: ${t}`, path);
      return n;
    }
    case 'long': {
      // Kept as a decimal string: ids may exceed 2^53.
      if (!/^[-+]?\d{1,19}$/.test(t)) throw new SoapXmlError(`not a long: ${JSON.stringify(t.slice(0, 40))}`, path);
      const v = BigInt(t);
      if (v < -(2n ** 63n) || v >= 2n ** 63n) throw new SoapXmlError(`out of range for long: ${t}`, path);
      return v.toString();
    }
    case 'float': {
      const n = Number(t);
      if (t === '' || Number.isNaN(n)) throw new SoapXmlError(`not a number: ${JSON.stringify(t.slice(0, 40))}`, path);
      return n;
    }
    case 'boolean':
      if (t === 'true' || t === '1') return true;
      if (t === 'false' || t === '0') return false;
      throw new SoapXmlError(`not a boolean: ${JSON.stringify(t.slice(0, 40))}`, path);
    case 'dateTime': {
      if (/^\s*0*1-01-01T00:00:00/.test(t)) return null;
      const ms = parseDate(t);
      if (ms === null) throw new SoapXmlError(`not a dateTime: ${JSON.stringify(t.slice(0, 40))}`, path);
      return new Date(ms).toISOString();
    }
    default:
      return text;
  }
}

/** Decodes an element by its declared type. Records are read by element name; unknown elements are ignored. */
export function decodeValue(node: XmlNode, type: string, path: string, opts: DecodeOptions = {}): unknown {
  if (node.nil) return null;
  if (isPrimitive(type)) return decodePrimitive(type, node.text, path);
  const t = typeDef(type);
  if (t.kind === 'enum') return node.text.trim(); // an unknown value is kept as text, never fatal
  if (t.kind === 'array')
    return node.children.filter((c) => c.name === t.item).map((c, i) => decodeValue(c, t.item, `${path}/${t.item}[${i}]`, opts));
  return decodeFields(node, t.fields, path, opts);
}

export function decodeFields(
  node: XmlNode,
  fieldDefs: readonly FieldDef[],
  path: string,
  opts: DecodeOptions = {},
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fieldDefs) {
    const c = child(node, f.name);
    if (c) {
      if (!c.streamed) out[f.name] = decodeValue(c, f.type, `${path}/${f.name}`, opts);
    } else if (opts.fillDefaults && f.min === 1) {
      out[f.name] = zeroOf(f.type);
    }
  }
  return out;
}
