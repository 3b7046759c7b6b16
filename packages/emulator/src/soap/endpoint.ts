/**
 * The emulator's SOAP 4.1 endpoint, on the same server and store as REST: `POST
 * /v4.1/prod/GridOS.asmx` (SOAP 1.1 and 1.2, dispatched on the action), `GET …?WSDL` (its address
 * is the emulator itself), faults with HTTP 500, sessions, and the REST side's fault injection
 * switches (a rule for `parcels.download` also hits `ParcelDownload`; other operations are named
 * `soap.<Operation>`). Parcel content is streamed both ways: never a whole parcel in memory.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { ALL_OPERATIONS, SOAP_NS, SOAP_PATH, buildWsdl, operationByName, type OperationDef } from '@gridsync/protocol/soap';
import {
  SoapXmlError,
  decodeFields,
  escapeText,
  readXml,
  soapPayload,
  writeFault,
  writeResponse,
  type SoapVersion,
  type XmlNode,
} from '@gridsync/protocol/soap';
import type { World } from '../context.js';
import { MAX_ENVELOPE_BYTES, MAX_ENVELOPE_TAGS, RequestTooLargeError, boundedBody, maxUploadRequestBytes } from '../request-body.js';
import type { FaultInjector, FaultPlan } from '../faults.js';
import { CONTENT_ELEMENTS, ContentSink, discardUpload } from './content-sink.js';
import { RET, SoapFault, fault, toSoapFault } from './fault.js';
import { serveForm } from './form.js';
import { ALIASES, definitionOf, faultNameOf, known } from './names.js';
import { OPERATIONS, type OpContext, type OpEnv, type Operation } from './operations/index.js';
import { ParcelIds } from './records.js';
import { contentType, send, sendFileInfo } from './respond.js';
import { SoapSessions, type Caller } from './sessions.js';

/** Defaults of the endpoint's settings (EmulatorSettings.soap). */
export const SOAP_DEFAULTS = { sessionTimeoutS: 1200, maxSessionsPerUser: 5, parcelIdOffset: '0', inboxCap: 500 } as const;

const ADMIN_PREFIX = '/_emulator/soap/';

export class SoapEndpoint {
  private readonly sessions: SoapSessions;
  /** What every operation is given besides its call. */
  private readonly env: OpEnv;

  constructor(
    private readonly world: World,
    private readonly faults: FaultInjector,
    private readonly options: { readonly admin: boolean },
  ) {
    const s = { ...SOAP_DEFAULTS, ...world.settings.soap };
    this.sessions = new SoapSessions(world, { timeoutS: s.sessionTimeoutS, maxPerUser: s.maxSessionsPerUser });
    this.env = { world, sessions: this.sessions, ids: new ParcelIds(BigInt(s.parcelIdOffset)), inboxCap: s.inboxCap };
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
      if (url.pathname.length > SOAP_PATH.length + 1)
        return await serveForm(this.env, req, res, url, url.pathname.slice(SOAP_PATH.length + 1));
      if (req.method === 'GET') {
        req.resume();
        if ([...url.searchParams.keys()].some((k) => k.toLowerCase() === 'wsdl')) {
          const host = req.headers.host ?? '127.0.0.1';
          return send(res, 200, 'text/xml; charset=utf-8', buildWsdl(`http://${host}${SOAP_PATH}`));
        }
        const list = ALL_OPERATIONS.map((o) => `<li><b>${o.name}</b>: ${escapeText(o.doc)}</li>`).join('');
        return send(
          res,
          200,
          'text/html; charset=utf-8',
          `<html><body><h1>GridOS API v4 (emulator)</h1><p>WSDL: <a href="?WSDL">?WSDL</a></p><ul>${list}</ul></body></html>`,
        );
      }
      if (req.method !== 'POST') {
        req.resume();
        return send(res, 405, 'text/plain; charset=utf-8', 'POST a SOAP envelope, or GET ?WSDL');
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
      send(res, 500, contentType(version), writeFault(version, f.fields()));
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
      const run = alias ? alias.run : (OPERATIONS[opName] as Operation);
      let params: Record<string, unknown>;
      try {
        params = decodeFields(payload, def.params, opName, { fillDefaults: true });
      } catch (err) {
        if (err instanceof SoapXmlError) throw fault(RET.InvalidDataType, err.message, err.path.split('/').pop() ?? '');
        throw err;
      }
      const caller = def.session ? (early?.caller ?? this.sessions.authenticate(params.SessionID)) : null;
      const ctx: OpContext = {
        ...this.env,
        op: def,
        params,
        caller,
        content,
        raw: new Map(payload.children.map((c) => [c.name, c.text])),
        ip: req.socket.remoteAddress ?? null,
      };
      const outcome = run(ctx);
      if (!def.name.startsWith('ParcelUpload')) await discardUpload(this.world, content);
      if (plan?.resetAfter) {
        req.socket.resetAndDestroy();
        return version;
      }
      if ('download' in outcome) {
        const render = (info: Record<string, unknown>): string => writeResponse(def, info, version);
        await sendFileInfo(res, this.env, outcome.download, render, contentType(version), plan);
        return version;
      }
      const body = writeResponse(def, outcome.result, version, opName);
      send(res, 200, contentType(version), body, plan);
      return version;
    } catch (err) {
      await discardUpload(this.world, content);
      throw err;
    }
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
      send(
        res,
        500,
        contentType(version),
        writeFault(version, new SoapFault(RET.InternalError, 'Server was unable to process request. ---> injected fault').fields()),
      );
    } else {
      res.setHeader('connection', 'close');
      if (plan.retryAfter) res.setHeader('retry-after', plan.retryAfter);
      send(res, plan.status, 'text/plain; charset=utf-8', plan.status === 429 ? 'Too Many Requests' : 'Service Unavailable');
    }
    return true;
  }

  /** `POST /_emulator/soap/expire-sessions`: every open session expires now (tests of the re-login). */
  private admin(req: IncomingMessage, res: ServerResponse, url: URL): void {
    req.resume();
    if (!this.options.admin || req.method !== 'POST' || url.pathname !== `${ADMIN_PREFIX}expire-sessions`) {
      return send(
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
    send(res, 200, 'application/json', JSON.stringify({ success: true, data: { expired }, errorCode: null, message: null }));
  }
}
