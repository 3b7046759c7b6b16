/**
 * The emulator's SOAP 4.1 endpoint, on the same server and store as REST: `POST
 * /v4.1/prod/GridOS.asmx` (SOAP 1.1 and 1.2, dispatched on the action), `GET …?WSDL` (its address
 * is the emulator itself), faults with HTTP 500, sessions, and the REST side's fault injection
 * switches (a rule for `parcels.download` also hits `ParcelDownload`; other operations are named
 * `soap.<Operation>`). Parcel content is streamed both ways: never a whole parcel in memory.
 */
import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { Base64Decoder, Base64Encoder, InvalidBase64Error, base64Length } from '../../api/index.js';
import { ALL_OPERATIONS, SOAP_NS, SOAP_PATH, operationByName, type OperationDef } from '../../api/soap/index.js';
import { buildWsdl } from '../../api/soap/index.js';
import {
  SoapXmlError,
  STREAM_SLOT,
  decodeFields,
  escapeText,
  readXml,
  soapPayload,
  writeFault,
  writeField,
  writeResponse,
  type SoapVersion,
  type XmlNode,
} from '../../api/soap/index.js';
import type { World } from '../context.js';
import {
  MAX_ENVELOPE_BYTES,
  MAX_ENVELOPE_TAGS,
  RequestTooLargeError,
  boundedBody,
  maxUploadRequestBytes,
  readBoundedText,
} from '../request-body.js';
import type { FaultInjector, FaultPlan } from '../faults.js';
import type { StoredContent } from '../content.js';
import { RET, SoapFault, fault, toSoapFault } from './fault.js';
import { OPERATIONS, standardOfContent, type OpContext } from './operations/index.js';
import { ParcelIds } from './records.js';
import { SoapSessions, type Caller } from './sessions.js';

/** Defaults of the endpoint's settings (EmulatorSettings.soap). */
export const SOAP_DEFAULTS = { sessionTimeoutS: 1200, maxSessionsPerUser: 5, parcelIdOffset: '0', inboxCap: 500 } as const;

const CONTENT_ELEMENTS: ReadonlySet<string> = new Set(['Content', 'ContentBase64']);
const HEAD_BYTES = 4096;
const ADMIN_PREFIX = '/_emulator/soap/';
/** Form-binding bodies are read whole: large content belongs on the SOAP binding. */
const FORM_MAX_BYTES = 64 * 1024 * 1024;

/** Fault-injection names: the REST catalog name where the operation is the same step of the workflow. */
const FAULT_NAMES: Record<string, string> = {
  Login: 'auth.login',
  Logout: 'auth.logout',
  Version: 'auth.version',
  WhoAmI: 'users.me',
  ParcelInBox: 'parcels.pendingInboxList',
  ParcelInBoxEx: 'parcels.pendingInboxList',
  ParcelDownload: 'parcels.download',
  ParcelDownloadA: 'parcels.download',
  ParcelDownloadNoUpdate: 'parcels.download',
  ParcelDownloadNoUpdateA: 'parcels.download',
  ParcelDownloadConfirm: 'parcels.confirm',
  ParcelDownloadReset: 'parcels.resetToInbox',
  ParcelInfo: 'parcels.get',
  ParcelUpload: 'parcels.upload',
  ParcelUploadA: 'parcels.upload',
  ParcelUploadEx: 'parcels.upload',
  ParcelUploadExA: 'parcels.upload',
  ParcelUploadMft: 'parcels.upload',
  ParcelUploadMftA: 'parcels.upload',
  ParcelOutBoxInProcessEx: 'parcels.outboxList',
  ParcelOutBoxArchiveEx: 'parcels.outboxList',
  ParcelOutBoxErrorEx: 'parcels.outboxList',
};
export const faultNameOf = (op: string): string => FAULT_NAMES[op] ?? `soap.${op}`;

/**
 * Names some callers use that the 4.1 service does not have: accepted, never advertised in the
 * WSDL. Each answers as the operation it stands for, under its own element names.
 */
const PARCEL_OUTBOX: OperationDef = {
  name: 'ParcelOutBox',
  action: `${SOAP_NS}ParcelOutBox`,
  session: true,
  doc: '',
  params: [
    { name: 'SessionID', type: 'string', min: 0 },
    { name: 'BeginDate', type: 'dateTime', min: 1 },
    { name: 'EndDate', type: 'dateTime', min: 1 },
  ],
  result: { name: 'ParcelOutBoxResult', type: 'ParcelIDInfoCollection', min: 0 },
};
const ALIASES: Record<string, { def: OperationDef; run: string } | { refuse: string }> = {
  SessionInfo: { def: operationByName('WhoAmI') as OperationDef, run: 'WhoAmI' },
  UserGenerateAPIKey: { def: operationByName('GenerateAPIKey') as OperationDef, run: 'GenerateAPIKey' },
  InterconnectList: { def: operationByName('InterconnectListByGridID') as OperationDef, run: 'InterconnectListByGridID' },
  ParcelOutBox: { def: PARCEL_OUTBOX, run: 'ParcelOutBox' },
  NetworkAdd: { refuse: 'NetworkAdd does not exist in 4.1: networks are created by the operator' },
  ParcelCancel: { refuse: 'ParcelCancel does not exist in 4.1: cancel interchanges with InterchangeCancel' },
};

const known = (name: string): boolean => operationByName(name) !== undefined || name in ALIASES;

/** The operation a name stands for (undefined for the refused names). */
function definitionOf(name: string): OperationDef | undefined {
  const alias = ALIASES[name];
  if (!alias) return operationByName(name);
  return 'def' in alias ? alias.def : undefined;
}

export class SoapEndpoint {
  private readonly sessions: SoapSessions;
  private readonly ids: ParcelIds;
  private readonly inboxCap: number;

  constructor(
    private readonly world: World,
    private readonly faults: FaultInjector,
    private readonly options: { readonly admin: boolean },
  ) {
    const s = { ...SOAP_DEFAULTS, ...world.settings.soap };
    this.sessions = new SoapSessions(world, { timeoutS: s.sessionTimeoutS, maxPerUser: s.maxSessionsPerUser });
    this.ids = new ParcelIds(BigInt(s.parcelIdOffset));
    this.inboxCap = s.inboxCap;
  }

  /** True for the paths this endpoint answers (the server's one hook asks this first). */
  owns(pathname: string): boolean {
    const p = pathname.toLowerCase();
    return p === SOAP_PATH.toLowerCase() || p.startsWith(`${SOAP_PATH.toLowerCase()}/`) || pathname.startsWith(ADMIN_PREFIX);
  }

  async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    let version: SoapVersion = /application\/soap\+xml/i.test(req.headers['content-type'] ?? '') ? '1.2' : '1.1';
    try {
      if (url.pathname.startsWith(ADMIN_PREFIX)) return this.admin(req, res, url);
      if (url.pathname.length > SOAP_PATH.length + 1) return await this.form(req, res, url, url.pathname.slice(SOAP_PATH.length + 1));
      if (req.method === 'GET') {
        req.resume();
        if ([...url.searchParams.keys()].some((k) => k.toLowerCase() === 'wsdl')) {
          const host = req.headers.host ?? '127.0.0.1';
          return this.send(res, 200, 'text/xml; charset=utf-8', buildWsdl(`http://${host}${SOAP_PATH}`));
        }
        const list = ALL_OPERATIONS.map((o) => `<li><b>${o.name}</b>: ${escapeText(o.doc)}</li>`).join('');
        return this.send(
          res,
          200,
          'text/html; charset=utf-8',
          `<html><body><h1>GridOS API v4 (emulator)</h1><p>WSDL: <a href="?WSDL">?WSDL</a></p><ul>${list}</ul></body></html>`,
        );
      }
      if (req.method !== 'POST') {
        req.resume();
        return this.send(res, 405, 'text/plain; charset=utf-8', 'POST a SOAP envelope, or GET ?WSDL');
      }
      version = await this.call(req, res, version);
    } catch (err) {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      // A body not read to its end (refused early, too large) is not drained: the connection closes.
      if (!req.complete) res.setHeader('connection', 'close');
      const f = toSoapFault(err);
      this.send(res, 500, contentType(version), writeFault(version, f.fields()));
    }
  }

  private async call(req: IncomingMessage, res: ServerResponse, version: SoapVersion): Promise<SoapVersion> {
    const ct = req.headers['content-type'] ?? '';
    const header = version === '1.1' ? req.headers.soapaction : /;\s*action\s*=\s*"?([^";]+)"?/i.exec(ct)?.[1];
    const action = typeof header === 'string' ? header.trim().replace(/^"(.*)"$/, '$1') : undefined;
    let opName: string | undefined;
    if (action !== undefined && action !== '') {
      opName = action.startsWith(SOAP_NS) ? action.slice(SOAP_NS.length) : undefined;
      if (!opName || !known(opName))
        throw fault(RET.Unknown, `Server did not recognize the value of HTTP Header SOAPAction: ${action}.`, 'SOAPAction');
    } else if (version === '1.1') {
      throw fault(RET.Unknown, 'Server did not recognize the value of HTTP Header SOAPAction: (missing).', 'SOAPAction');
    }
    let plan = opName ? this.faults.plan(faultNameOf(opName)) : undefined;
    if (plan && (await this.injectBefore(req, res, plan, version))) return version;

    const upload = new ContentSink(this.world);
    // The session is checked as soon as its element has arrived, and content is taken only after
    // that: an unknown caller is refused before the rest of the body is read.
    let sessionId: string | undefined;
    let early: { caller: Caller } | undefined;
    const sessionBound = opName !== undefined && definitionOf(opName)?.session === true;
    const onClose = (node: XmlNode, depth: number): void => {
      if (depth !== 4 || node.name !== 'SessionID' || sessionId !== undefined) return;
      sessionId = node.text;
      if (sessionBound) early = { caller: this.sessions.authenticate(sessionId) };
    };
    const onStream = (text: string): Promise<void> => {
      if (sessionId === undefined) throw fault(RET.InvalidID, 'Content before the SessionID: send the SessionID first', 'SessionID');
      early ??= { caller: this.sessions.authenticate(sessionId) };
      return upload.push(text);
    };
    const limits = { maxBytes: maxUploadRequestBytes(this.world.settings.maxUploadBytes), maxTags: MAX_ENVELOPE_TAGS };
    let payloadVersion: SoapVersion;
    let payload;
    try {
      const root = await readXml(boundedBody(req, limits), {
        streamElements: CONTENT_ELEMENTS,
        onStream,
        onClose,
        maxText: MAX_ENVELOPE_BYTES,
      });
      ({ version: payloadVersion, payload } = soapPayload(root));
    } catch (err) {
      await upload.discard();
      if (err instanceof SoapFault) throw err;
      if (err instanceof RequestTooLargeError) throw fault(RET.InvalidDataLength, err.message);
      throw fault(RET.Unknown, `Server was unable to read request. ---> ${(err as Error).message}`);
    }
    const content = await upload.finish().catch(async (err: unknown) => {
      await upload.discard();
      throw err;
    });
    try {
      if (payloadVersion !== version)
        throw fault(RET.Unknown, `A SOAP ${payloadVersion} envelope sent as SOAP ${version} (Content-Type ${ct || 'missing'})`);
      if (payload.ns !== SOAP_NS) throw fault(RET.Unknown, `The body element <${payload.name}> is not in the namespace ${SOAP_NS}`);
      if (opName === undefined) {
        if (!known(payload.name)) throw fault(RET.Unknown, `Unknown operation ${payload.name}`);
        opName = payload.name;
        plan = this.faults.plan(faultNameOf(opName));
        if (await this.injectBefore(req, res, plan, version)) return version;
      } else if (payload.name !== opName) {
        throw fault(RET.Unknown, `The body element <${payload.name}> does not match the SOAPAction ${opName}`);
      }
      const alias = ALIASES[opName];
      if (alias && 'refuse' in alias) throw fault(RET.DataError, alias.refuse, opName);
      const def = alias ? alias.def : (operationByName(opName) as OperationDef);
      const run = alias ? alias.run : opName;
      let params: Record<string, unknown>;
      try {
        params = decodeFields(payload, def.params, opName, { fillDefaults: true });
      } catch (err) {
        if (err instanceof SoapXmlError) throw fault(RET.InvalidDataType, err.message, err.path.split('/').pop() ?? '');
        throw err;
      }
      const caller = def.session ? (early?.caller ?? this.sessions.authenticate(params.SessionID)) : null;
      const ctx: OpContext = {
        world: this.world,
        op: def,
        params,
        caller,
        sessions: this.sessions,
        ids: this.ids,
        content,
        inboxCap: this.inboxCap,
        raw: new Map(payload.children.map((c) => [c.name, c.text])),
        ip: req.socket.remoteAddress ?? null,
      };
      const outcome =
        run === 'ParcelOutBox'
          ? this.parcelOutBox(ctx)
          : (OPERATIONS[run] as (c: OpContext) => ReturnType<(typeof OPERATIONS)[string]>)(ctx);
      if (!def.name.startsWith('ParcelUpload')) await discard(this.world, content);
      if (plan?.resetAfter) {
        req.socket.resetAndDestroy();
        return version;
      }
      if ('download' in outcome) {
        await this.streamDownload(res, def, outcome.download.parcel, outcome.download.asString, version, plan);
        return version;
      }
      const body = writeResponse(def, outcome.result, version, opName);
      this.send(res, 200, contentType(version), body, plan);
      return version;
    } catch (err) {
      await discard(this.world, content);
      throw err;
    }
  }

  /** The union of the three outbox lists for the compatibility name ParcelOutBox. */
  private parcelOutBox(ctx: OpContext): { result: unknown } {
    const lists = ['ParcelOutBoxInProcessEx', 'ParcelOutBoxArchiveEx', 'ParcelOutBoxErrorEx'].map((name) => {
      const op = operationByName(name) as OperationDef;
      const r = (OPERATIONS[name] as (c: OpContext) => { result: unknown })({
        ...ctx,
        op,
        params: { ...ctx.params, NetworkID: 0, MailboxID: 0 },
      }).result as { ParcelIDInfoList?: unknown[] };
      return r.ParcelIDInfoList ?? [];
    });
    const all = lists.flat();
    return {
      result: {
        PageSize: all.length,
        PageNumber: 1,
        Count: all.length,
        TotalRecords: all.length,
        TotalPages: 1,
        ...(all.length ? { ParcelIDInfoList: all } : {}),
      },
    };
  }

  /** Latency, a reset before anything happened, or an injected status. True when the request is answered. */
  private async injectBefore(req: IncomingMessage, res: ServerResponse, plan: FaultPlan, version: SoapVersion): Promise<boolean> {
    if (plan.latencyMs > 0) await delay(plan.latencyMs);
    if (plan.resetBefore) {
      req.socket.resetAndDestroy();
      return true;
    }
    if (!plan.status) return false;
    req.resume();
    if (plan.status === 500) {
      this.send(
        res,
        500,
        contentType(version),
        writeFault(version, new SoapFault(RET.InternalError, 'Server was unable to process request. ---> injected fault').fields()),
      );
    } else {
      res.setHeader('connection', 'close');
      if (plan.retryAfter) res.setHeader('retry-after', plan.retryAfter);
      this.send(res, plan.status, 'text/plain; charset=utf-8', plan.status === 429 ? 'Too Many Requests' : 'Service Unavailable');
    }
    return true;
  }

  private send(res: ServerResponse, status: number, type: string, body: string, plan?: FaultPlan): void {
    res.writeHead(status, { 'content-type': type, 'content-length': String(Buffer.byteLength(body)) });
    if (plan && (plan.truncate || plan.resetDuringBody)) {
      res.write(body.slice(0, Math.floor(body.length / 2)));
      if (plan.resetDuringBody) res.socket?.resetAndDestroy();
      else res.socket?.destroySoon();
      return;
    }
    res.end(body);
  }

  /** FileInfo with the content base64-encoded while it is sent; Content-Length exact. */
  private async streamDownload(
    res: ServerResponse,
    def: OperationDef,
    p: Parameters<typeof standardOfContent>[1],
    asString: boolean,
    version: SoapVersion,
    plan?: FaultPlan,
    render: (info: Record<string, unknown>) => string = (info) => writeResponse(def, info, version),
    type = contentType(version),
  ): Promise<void> {
    const info = {
      ParcelID: this.ids.out(p.parcel_id),
      FileName: p.file_name,
      FileDate: p.created,
      Bytes: plan?.wrongBytes ? p.bytes + 1 : p.bytes,
      Standard: standardOfContent(this.world, p),
      [asString ? 'ContentBase64String' : 'Content']: STREAM_SLOT,
      routerArchive: false,
    };
    const [prefix, suffix] = render(info).split(STREAM_SLOT) as [string, string];
    const length = Buffer.byteLength(prefix) + base64Length(p.bytes) + Buffer.byteLength(suffix);
    res.writeHead(200, { 'content-type': type, 'content-length': String(length) });
    const breakAt = plan && (plan.truncate || plan.resetDuringBody) ? Math.floor(length / 2) : Number.POSITIVE_INFINITY;
    let sent = 0;
    const write = async (text: string): Promise<boolean> => {
      if (sent + text.length > breakAt) {
        res.write(text.slice(0, Math.max(0, breakAt - sent)));
        if (plan?.resetDuringBody) res.socket?.resetAndDestroy();
        else res.socket?.destroySoon();
        return false;
      }
      sent += text.length;
      if (!res.write(text)) await new Promise((r) => res.once('drain', r));
      return true;
    };
    if (!(await write(prefix))) return;
    const encoder = new Base64Encoder();
    for await (const chunk of fs.createReadStream(this.world.store.contentPath(p.content), { highWaterMark: 192 * 1024 })) {
      if (res.destroyed) return;
      if (!(await write(encoder.push(chunk as Buffer)))) return;
    }
    if (!(await write(encoder.end() + suffix))) return;
    res.end();
  }

  /**
   * The form binding some vendor tools use: `POST <address>/<Operation>` with form fields (or GET
   * with a query), one per parameter, all required; the answer is the bare result as XML whose root
   * is the result's type name; errors are HTTP 500 with plain text, no SOAP fault.
   */
  private async form(req: IncomingMessage, res: ServerResponse, url: URL, opName: string): Promise<void> {
    const def = operationByName(opName);
    const plainError = (status: number, text: string): void => this.send(res, status, 'text/plain; charset=utf-8', text);
    if (!def) {
      req.resume();
      return plainError(500, `${opName} Web Service method name is not valid.`);
    }
    let fields: URLSearchParams;
    if (req.method === 'GET') {
      req.resume();
      fields = url.searchParams;
    } else if (req.method === 'POST' && /application\/x-www-form-urlencoded/i.test(req.headers['content-type'] ?? '')) {
      try {
        fields = new URLSearchParams(await readBoundedText(req, FORM_MAX_BYTES));
      } catch (err) {
        if (!(err instanceof RequestTooLargeError)) throw err;
        res.setHeader('connection', 'close');
        return plainError(500, `Request body larger than ${FORM_MAX_BYTES} bytes: use the SOAP binding for large content.`);
      }
    } else {
      req.resume();
      return plainError(500, 'Request format is unrecognized: send application/x-www-form-urlencoded.');
    }
    const upload = new ContentSink(this.world);
    const children: XmlNode[] = [];
    try {
      for (const p of def.params) {
        const v = fields.get(p.name);
        if (v === null) return plainError(500, `Missing parameter: ${p.name}.`);
        if (CONTENT_ELEMENTS.has(p.name)) await upload.push(v);
        children.push({ name: p.name, ns: SOAP_NS, text: v, children: [], nil: false, streamed: CONTENT_ELEMENTS.has(p.name) });
      }
    } catch (err) {
      await upload.discard();
      return plainError(500, (err as Error).message);
    }
    const content = await upload.finish().catch(async (err: unknown) => {
      await upload.discard();
      throw err;
    });
    try {
      const params = decodeFields({ name: def.name, ns: SOAP_NS, text: '', children, nil: false, streamed: false }, def.params, def.name, {
        fillDefaults: true,
      });
      const caller = def.session ? this.sessions.authenticate(params.SessionID) : null;
      const ctx: OpContext = {
        world: this.world,
        op: def,
        params,
        caller,
        sessions: this.sessions,
        ids: this.ids,
        content,
        inboxCap: this.inboxCap,
        raw: new Map(children.map((c) => [c.name, c.text])),
        ip: req.socket.remoteAddress ?? null,
      };
      const outcome = (OPERATIONS[def.name] as (c: OpContext) => ReturnType<(typeof OPERATIONS)[string]>)(ctx);
      if (!def.name.startsWith('ParcelUpload')) await discard(this.world, content);
      const bare = (value: unknown): string => {
        const root = def.result.type;
        const out: string[] = [];
        writeField(out, { name: root, type: root, min: 1 }, value, { dates: 'z' });
        return `<?xml version="1.0" encoding="utf-8"?>${out.join('').replace(`<${root}>`, `<${root} xmlns="${SOAP_NS}">`)}`;
      };
      if ('download' in outcome) {
        return await this.streamDownload(
          res,
          def,
          outcome.download.parcel,
          outcome.download.asString,
          '1.1',
          undefined,
          bare,
          'text/xml; charset=utf-8',
        );
      }
      this.send(res, 200, 'text/xml; charset=utf-8', bare(outcome.result));
    } catch (err) {
      await discard(this.world, content);
      if (res.headersSent) return void res.destroy();
      plainError(500, toSoapFault(err).message);
    }
  }

  /** `POST /_emulator/soap/expire-sessions`: every open session expires now (tests of the re-login). */
  private admin(req: IncomingMessage, res: ServerResponse, url: URL): void {
    req.resume();
    if (!this.options.admin || req.method !== 'POST' || url.pathname !== `${ADMIN_PREFIX}expire-sessions`) {
      return this.send(
        res,
        404,
        'application/json',
        JSON.stringify({
          success: false,
          data: null,
          errorCode: 'ObjectNotFound',
          message: `no admin route ${req.method ?? ''} ${url.pathname}`,
        }),
      );
    }
    const expired = this.sessions.expireAll();
    this.send(res, 200, 'application/json', JSON.stringify({ success: true, data: { expired }, errorCode: null, message: null }));
  }
}

const contentType = (v: SoapVersion): string => (v === '1.1' ? 'text/xml; charset=utf-8' : 'application/soap+xml; charset=utf-8');

async function discard(world: World, content: StoredContent | undefined): Promise<void> {
  if (content) await fs.promises.rm(world.store.contentPath(content.name), { force: true });
}

/** Decodes streamed base64 content (whitespace allowed, as XML Schema allows it) into a content file. */
class ContentSink {
  private readonly name = `tmp-${randomUUID()}`;
  private out: fs.WriteStream | undefined;
  private readonly decoder = new Base64Decoder();
  private readonly hash = createHash('sha256');
  private readonly head: Buffer[] = [];
  private headBytes = 0;

  constructor(private readonly world: World) {}

  async push(text: string): Promise<void> {
    const clean = /\s/.test(text) ? text.replace(/\s+/g, '') : text;
    if (clean === '') return;
    this.out ??= fs.createWriteStream(this.world.store.contentPath(this.name));
    let buf: Buffer;
    try {
      buf = this.decoder.push(clean);
    } catch (err) {
      if (err instanceof InvalidBase64Error) throw fault(RET.InvalidDataType, `Content is not valid base64: ${err.message}`, 'Content');
      throw err;
    }
    if (buf.length === 0) return;
    if (this.decoder.bytes > this.world.settings.maxUploadBytes) {
      throw fault(
        RET.InvalidDataLength,
        `Content is larger than the maximum parcel size (max=${this.world.settings.maxUploadBytes})`,
        'Content',
      );
    }
    this.hash.update(buf);
    if (this.headBytes < HEAD_BYTES) {
      this.head.push(buf.subarray(0, HEAD_BYTES - this.headBytes));
      this.headBytes += Math.min(buf.length, HEAD_BYTES - this.headBytes);
    }
    if (!this.out.write(buf)) await new Promise<void>((r) => this.out?.once('drain', () => r()));
  }

  async finish(): Promise<StoredContent | undefined> {
    if (!this.out) return undefined;
    try {
      this.decoder.end();
    } catch (err) {
      if (err instanceof InvalidBase64Error) throw fault(RET.InvalidDataType, `Content is not valid base64: ${err.message}`, 'Content');
      throw err;
    }
    const out = this.out;
    await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
    return { name: this.name, bytes: this.decoder.bytes, sha256: this.hash.digest('hex'), head: Buffer.concat(this.head) };
  }

  async discard(): Promise<void> {
    this.out?.destroy();
    if (this.out) await fs.promises.rm(this.world.store.contentPath(this.name), { force: true });
  }
}
