// A scripted stand-in for the hosted service, written from the service's published wire facts (the
// envelope, the daemon's endpoints, their documented variants) and NOT from src/api or our
// emulator: it shares no code or schema with gridsync. Every answer can be bent into one of the
// documented variants, and faults can be injected per request. Binds 127.0.0.1, port 0.
import { once } from 'node:events';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ServiceParcel {
  /** As a bigint so that ids above 2^53 go on the wire exactly as the service would write them. */
  parcelId: bigint;
  mailboxId: number;
  fileName: string | null;
  content: Buffer;
  status: string;
  direction: 'in' | 'out';
  created: string;
  gridIdFrom: number;
  gridIdTo: number;
}

export interface ServedRequest {
  readonly n: number;
  readonly method: string;
  readonly path: string;
  readonly body: Record<string, unknown>;
  readonly at: number;
}

/** A raw answer: status, headers, body text. */
export interface RawAnswer {
  status: number;
  headers?: Record<string, string>;
  body: string;
}

export interface Variants {
  /** How success envelopes carry errorCode/message: "" (default), null, or not at all. */
  envelope?: 'empty-strings' | 'null' | 'omitted';
  /** Session endpoint: full record, only some fields, no such endpoint (404 page), or a 500. */
  session?: 'full' | 'partial' | 'missing' | 'error';
  /** Upload's data: the bare parcel id (reference form) or an object carrying it. */
  upload?: 'bare' | 'object';
  /** Confirm's data: true, an object with the status, or null with a message. */
  confirm?: 'true' | 'object' | 'null';
  /** Reshapes a parcel record as it is listed or fetched (extra, missing, renamed fields, …). */
  record?: (r: Record<string, unknown>, p: ServiceParcel) => Record<string, unknown>;
  /** Reshapes the download data (fields other than content). */
  download?: (d: Record<string, unknown>, p: ServiceParcel) => Record<string, unknown>;
  /** The service's clock minus the real one: its `Date` headers, the `created` of uploads and the outbox list's `beginDate` use it. */
  clockOffsetMs?: number;
  /** What the `Date` header reads beyond the service's clock (a proxy's own, wrong clock): the stamps keep the service's. */
  dateOffsetMs?: number;
  /** Answers a request instead of the script (a fault); undefined lets the script answer. */
  fault?: (req: ServedRequest, res: ServerResponse) => boolean | Promise<boolean>;
}

export interface ScriptedService {
  readonly url: string;
  readonly apiKey: string;
  readonly parcels: ServiceParcel[];
  readonly requests: ServedRequest[];
  /** Grid ID records `GET /v2/ids/{id}` answers (a trading partner's name is its description); others are 404 ObjectNotFound. */
  readonly gridIds: Map<number, Record<string, unknown>>;
  variants: Variants;
  addInbound(fileName: string | null, content: Buffer | string, over?: Partial<ServiceParcel>): ServiceParcel;
  confirmed(): ServiceParcel[];
  close(): Promise<void>;
}

/** JSON text in which bigint values appear as bare digits (how a 64-bit id is written on the wire). */
export function wireJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? `__big:${v}__` : v)).replace(/"__big:(\d+)__"/g, '$1');
}

const PROXY_404 =
  '<html><head><title>404 Not Found</title></head><body><center><h1>404 Not Found</h1></center><hr><center>nginx</center></body></html>';

export async function startScriptedService(
  options: { mailboxId?: number; apiKey?: string; firstId?: bigint } = {},
): Promise<ScriptedService> {
  const mailboxId = options.mailboxId ?? 1001;
  const apiKey = options.apiKey ?? 'conformance-key';
  const parcels: ServiceParcel[] = [];
  const requests: ServedRequest[] = [];
  let nextId = options.firstId ?? 5_000_000n;
  let n = 0;
  const serviceNow = (): number => Date.now() + (svc.variants.clockOffsetMs ?? 0);
  const svc: ScriptedService = {
    url: '',
    apiKey,
    parcels,
    requests,
    gridIds: new Map(),
    variants: {},
    addInbound(fileName, content, over = {}) {
      const p: ServiceParcel = {
        parcelId: nextId++,
        mailboxId,
        fileName,
        content: Buffer.isBuffer(content) ? content : Buffer.from(content),
        status: 'InBoxReady',
        direction: 'in',
        created: '2026-05-07T08:00:00Z',
        gridIdFrom: 7001,
        gridIdTo: 7002,
        ...over,
      };
      parcels.push(p);
      return p;
    },
    confirmed: () => parcels.filter((p) => p.direction === 'in' && p.status === 'InBoxTransferred'),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  const send = (
    res: ServerResponse,
    status: number,
    text: string,
    headers: Record<string, string> = { 'content-type': 'application/json' },
  ): void => {
    res.writeHead(status, { date: new Date(serviceNow() + (svc.variants.dateOffsetMs ?? 0)).toUTCString(), ...headers });
    res.end(text);
  };
  const ok = (res: ServerResponse, data: unknown, message: string | null = null): void => {
    const form = svc.variants.envelope ?? 'empty-strings';
    const env: Record<string, unknown> = { success: true, data };
    if (form === 'empty-strings') Object.assign(env, { errorCode: '', message: message ?? '' });
    if (form === 'null') Object.assign(env, { errorCode: null, message });
    send(res, 200, wireJson(env));
  };
  const fail = (res: ServerResponse, status: number, errorCode: string, message: string): void =>
    send(res, status, wireJson({ success: false, data: null, errorCode, message }));
  const record = (p: ServiceParcel, withStatus: boolean): Record<string, unknown> => {
    const r: Record<string, unknown> = {
      parcelId: p.parcelId,
      mailboxId: p.mailboxId,
      networkId: 1,
      fileName: p.fileName,
      bytes: p.content.length,
      gridIdFrom: p.gridIdFrom,
      gridIdTo: p.gridIdTo,
      created: p.created,
      modified: p.created,
    };
    if (withStatus) r.status = p.status;
    return svc.variants.record ? svc.variants.record(r, p) : r;
  };
  const find = (id: unknown): ServiceParcel | undefined => {
    if (typeof id !== 'number' && typeof id !== 'string') return undefined;
    let big: bigint;
    try {
      big = BigInt(id);
    } catch {
      return undefined;
    }
    return parcels.find((p) => p.parcelId === big && p.mailboxId === mailboxId);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: Record<string, unknown>;
    try {
      body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    } catch {
      return fail(res, 400, 'InvalidParameter', 'body is not JSON');
    }
    const url = new URL(req.url ?? '/', 'http://x');
    const served: ServedRequest = { n: ++n, method: req.method ?? '', path: url.pathname, body, at: Date.now() };
    requests.push(served);
    if (svc.variants.fault && (await svc.variants.fault(served, res))) return;
    if (req.headers['x-api-key'] !== apiKey) return fail(res, 401, 'InvalidAPIKey', 'unknown API key');
    const route = `${served.method} ${served.path}`;
    const byId = /^\/v2\/parcels\/(\d+)$/.exec(served.path);
    const gridIdPath = /^\/v2\/ids\/(\d+)$/.exec(served.path);
    if (req.method === 'GET' && gridIdPath) {
      const g = svc.gridIds.get(Number(gridIdPath[1]));
      return g ? ok(res, g) : fail(res, 404, 'ObjectNotFound', 'grid ID not found');
    }
    if (route === 'POST /v2/auth/session') {
      const mode = svc.variants.session ?? 'full';
      if (mode === 'missing') return send(res, 404, PROXY_404, { 'content-type': 'text/html' });
      if (mode === 'error') return fail(res, 500, 'InternalError', 'session store unavailable');
      if (mode === 'partial') return ok(res, { login: 'conformance' });
      return ok(res, { userId: 11, login: 'conformance', networkId: 1, mailboxId, authLevel: 'MailboxUser', expiresAt: null });
    }
    if (route === 'GET /v2/users/me') return ok(res, { userId: 11, login: 'conformance', mailboxId });
    if (route === 'GET /v2/mailboxes/' + mailboxId)
      return ok(res, { mailboxId, networkId: 1, uniqueId: 'CONF1', companyName: 'Conformance', status: 'Active' });
    if (route === 'POST /v2/parcels/pending-inbox-list') {
      const mine = parcels.filter((p) => p.direction === 'in' && p.status === 'InBoxReady' && p.mailboxId === mailboxId);
      return ok(
        res,
        mine.map((p) => record(p, false)),
      );
    }
    if (req.method === 'GET' && byId) {
      const p = find(byId[1]);
      return p ? ok(res, record(p, true)) : fail(res, 404, 'ObjectNotFound', 'no such parcel');
    }
    if (route === 'POST /v2/parcels/download') {
      const p = find(body.parcelId);
      if (!p) return fail(res, 404, 'ObjectNotFound', 'no such parcel');
      let d: Record<string, unknown> = { parcelId: p.parcelId, fileName: p.fileName, bytes: p.content.length };
      if (svc.variants.download) d = svc.variants.download(d, p);
      // `content` goes last, as a large string would in a streamed answer.
      return ok(res, { ...d, content: p.content.toString('base64') });
    }
    if (route === 'POST /v2/parcels/confirm') {
      const p = find(body.parcelId);
      if (!p || p.direction !== 'in') return fail(res, 404, 'ObjectNotFound', 'no such parcel');
      p.status = 'InBoxTransferred';
      const mode = svc.variants.confirm ?? 'true';
      if (mode === 'object') return ok(res, { parcelId: p.parcelId, status: p.status });
      if (mode === 'null') return ok(res, null, 'Parcel confirmed.');
      return ok(res, true);
    }
    if (route === 'POST /v2/parcels/upload') {
      if (typeof body.fileName !== 'string' || body.fileName === '' || typeof body.content !== 'string')
        return fail(res, 400, 'InvalidParameter', 'fileName and content are required');
      const content = Buffer.from(body.content, 'base64');
      if (body.bytes !== undefined && body.bytes !== content.length)
        return fail(res, 400, 'InvalidParameter', 'bytes does not match the content');
      const p: ServiceParcel = {
        parcelId: nextId++,
        mailboxId,
        fileName: body.fileName,
        content,
        status: 'outboxPending',
        direction: 'out',
        created: new Date(serviceNow()).toISOString().replace(/\.\d+Z$/, 'Z'),
        gridIdFrom: 7001,
        gridIdTo: 7002,
      };
      parcels.push(p);
      return ok(
        res,
        (svc.variants.upload ?? 'bare') === 'bare'
          ? p.parcelId
          : { parcelId: p.parcelId, fileName: p.fileName, status: p.status, size: content.length },
      );
    }
    if (route === 'POST /v2/parcels/outbox-list') {
      const per = typeof body.recordsPerPage === 'number' ? body.recordsPerPage : 25;
      const page = typeof body.pageNo === 'number' ? body.pageNo : 1;
      const since = typeof body.beginDate === 'string' ? Date.parse(body.beginDate) : NaN;
      const out = parcels.filter((p) => p.direction === 'out' && p.mailboxId === mailboxId && !(Date.parse(p.created) < since));
      return ok(
        res,
        out.slice((page - 1) * per, page * per).map((p) => record(p, true)),
      );
    }
    return send(res, 404, PROXY_404, { 'content-type': 'text/html' });
  };

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) send(res, 500, wireJson({ success: false, data: null, errorCode: 'InternalError', message: String(err) }));
      else res.destroy();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  (svc as { url: string }).url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return svc;
}
