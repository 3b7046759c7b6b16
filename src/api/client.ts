/**
 * GridClient: the REST v2 client. Composes the HTTP channel (http.ts), the credentials
 * (session.ts), the attempt loop (retry-loop.ts), envelope decoding (envelope.ts) and streamed
 * transfer (transfer.ts); implements the pipelines' MailboxTransport and typed catalog calls.
 */
import type { Writable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import type { z } from 'zod';
import { auth as authEndpoints, catalog, matchEndpoint, parcels as parcelEndpoints, type EndpointDef } from './catalog/index.js';
import { readEnvelope } from './envelope.js';
import { GridConfigError } from './errors.js';
import { HttpChannel, type HttpTimeouts } from './http.js';
import { DEFAULT_BACKOFF, type BackoffPolicy } from './retry.js';
import { RetryLoop, type RetryOptions } from './retry-loop.js';
import { Session, type GridAuth } from './session.js';
import { receiveParcel, uploadBody, type DownloadResultInfo, type UploadOptions } from './transfer.js';
import type { CallOptions, DownloadOptions, MailboxTransport, OutboxQuery, ParcelSummary, SessionContext, UploadCallOptions } from './transport.js';
import type { LoginResult, ParcelIDInfo } from './wire.js';

export { gridsyncVersion } from '../version.js';
export type { GridAuth } from './session.js';

export interface ClientLogger {
  warn(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

export interface GridClientOptions {
  /** Service root without `/v2`, e.g. `https://api.example.com`. */
  readonly baseUrl: string;
  readonly auth: GridAuth;
  /** Attempts per call, the first included. Default 3. */
  readonly maxAttempts?: number;
  readonly timeouts?: HttpTimeouts;
  /** Keep-alive connections to the service. Default 8. */
  readonly connections?: number;
  readonly backoff?: Partial<BackoffPolicy>;
  readonly now?: () => number;
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Jitter source in [0, 1). */
  readonly random?: () => number;
  readonly logger?: ClientLogger;
  /** Plain http:// to a host that is not loopback is refused unless true. */
  readonly allowInsecureHttp?: boolean;
}

/** One record of a list endpoint: the array's element, or the element of the object page's list. */
export type ListRow<E extends EndpointDef> = RowOf<z.output<E['response']>>;
type RowOf<O> = O extends readonly (infer R)[] ? R : ArrayElements<{ [K in keyof O as string extends K ? never : number extends K ? never : K]: O[K] }>;
type ArrayElements<O> = { [K in keyof O]: O[K] extends readonly (infer R)[] ? R : never }[keyof O];

const realSleep = (ms: number, signal?: AbortSignal): Promise<void> => delay(ms, undefined, signal ? { signal } : {});

export class GridClient implements MailboxTransport {
  readonly baseUrl: string;
  private readonly http: HttpChannel;
  private readonly session: Session;
  private readonly retry: RetryLoop;
  private readonly now: () => number;
  private readonly logger: ClientLogger | undefined;
  private closed = false;

  constructor(options: GridClientOptions) {
    this.baseUrl = options.baseUrl;
    this.http = new HttpChannel(options.baseUrl, {
      ...(options.connections !== undefined ? { connections: options.connections } : {}),
      ...(options.timeouts ? { timeouts: options.timeouts } : {}),
      ...(options.allowInsecureHttp !== undefined ? { allowInsecureHttp: options.allowInsecureHttp } : {}),
    });
    this.now = options.now ?? Date.now;
    this.logger = options.logger;
    this.session = new Session(options.auth, (endpoint, body) => this.tokenCall(endpoint, body), this.now, this.logger);
    this.retry = new RetryLoop({
      session: this.session,
      maxAttempts: Math.max(1, options.maxAttempts ?? 3),
      backoff: { ...DEFAULT_BACKOFF, ...options.backoff },
      now: this.now,
      sleep: options.sleep ?? realSleep,
      random: options.random ?? Math.random,
      logger: this.logger,
      isClosed: () => this.closed,
    });
  }

  /** Calls one catalog endpoint; returns its validated `data`. */
  async call<E extends EndpointDef>(endpoint: E, request: z.input<E['request']>, options: CallOptions = {}): Promise<z.output<E['response']>> {
    const { path, body } = buildRequest(endpoint, request as Record<string, unknown>);
    return this.retry.run(this.retryOptions(endpoint, options), async (headers) => {
      const res = await this.http.send(endpoint.name, endpoint.method, path, headers, body, options.signal);
      return readEnvelope(endpoint, res, { name: endpoint.name, now: this.now() });
    }) as Promise<z.output<E['response']>>;
  }

  /**
   * One raw call for `gridsync call`: any method and path. Auth, retry and the envelope apply; the
   * data is returned as the service sent it (validated only when the path is a known endpoint).
   */
  async callRaw(method: string, path: string, body?: unknown, options: CallOptions = {}): Promise<unknown> {
    const match = matchEndpoint(method, path);
    const name = match?.endpoint.name ?? `${method.toUpperCase()} ${path}`;
    const idempotent = match?.endpoint.idempotent ?? method.toUpperCase() === 'GET';
    const payload = body === undefined ? undefined : JSON.stringify(body);
    return this.retry.run({ endpoint: name, idempotent, auth: match?.endpoint.auth ?? true, signal: options.signal }, async (headers) => {
      const res = await this.http.send(name, method.toUpperCase(), path, headers, payload, options.signal);
      return readEnvelope(match?.endpoint, res, { name, now: this.now() });
    });
  }

  /** Iterates over every record of a list endpoint, page by page (both list shapes). */
  async *paginate<E extends EndpointDef>(endpoint: E, request: z.input<E['request']>, options: CallOptions = {}): AsyncGenerator<ListRow<E>> {
    const list = endpoint.list;
    if (!list) throw new GridConfigError(`${endpoint.name} is not a paged list`, endpoint.name);
    const base = request as Record<string, unknown>;
    const perPage = typeof base.recordsPerPage === 'number' ? base.recordsPerPage : list.kind === 'object' ? 100 : 25;
    for (let pageNo = typeof base.pageNo === 'number' ? base.pageNo : 1; ; pageNo++) {
      const data: unknown = await this.call(endpoint, { ...base, pageNo, recordsPerPage: perPage } as z.input<E['request']>, options);
      if (list.kind === 'array') {
        const rows = data as ListRow<E>[];
        yield* rows;
        if (rows.length < perPage) return;
      } else {
        const page = data as Record<string, unknown> & { totalRecords: number };
        const rows = (page[list.key] as ListRow<E>[] | undefined) ?? [];
        yield* rows;
        if (rows.length === 0 || pageNo * perPage >= page.totalRecords) return;
      }
    }
  }

  // ------------------------------------------------------------------ MailboxTransport

  async sessionContext(options: CallOptions = {}): Promise<SessionContext> {
    const s = await this.call(catalog.auth.session, {}, options);
    return { mailboxId: s.mailboxId, userId: s.userId, login: s.login };
  }

  async pendingInbox(mailboxId: number, options: CallOptions = {}): Promise<ParcelSummary[]> {
    const rows = await this.call(catalog.parcels.pendingInboxList, { mailboxId }, options);
    return rows.map(toSummary);
  }

  async parcel(parcelId: number, options: CallOptions = {}): Promise<ParcelSummary> {
    return toSummary(await this.call(catalog.parcels.get, { parcelId }, options));
  }

  async confirmParcel(parcelId: number, options: CallOptions = {}): Promise<void> {
    await this.call(catalog.parcels.confirm, { parcelId }, options);
  }

  async *outboxParcels(query: OutboxQuery, options: CallOptions = {}): AsyncGenerator<ParcelSummary> {
    const request = { mailboxId: query.mailboxId, beginDate: query.since, recordsPerPage: 500 };
    for await (const p of this.paginate(catalog.parcels.outboxList, request, options)) yield toSummary(p);
  }

  /**
   * Downloads one parcel into `writable`. Retried only until the first content byte was written;
   * after that a failure is thrown and the caller restarts the parcel from scratch.
   */
  async downloadParcel(parcelId: number, writable: Writable, options: DownloadOptions = {}): Promise<DownloadResultInfo> {
    const endpoint = parcelEndpoints.download;
    const body = JSON.stringify({ parcelId });
    let written = 0;
    const retry: RetryOptions = { ...this.retryOptions(endpoint, options), mayRetry: () => written === 0 };
    return this.retry.run(retry, async (headers) => {
      const res = await this.http.send(endpoint.name, 'POST', endpoint.path, headers, body, options.signal);
      if (res.statusCode !== 200) return (await readEnvelope(endpoint, res, { name: endpoint.name, now: this.now() })) as never;
      return receiveParcel(res, writable, {
        endpoint: endpoint.name,
        parcelId,
        expectedBytes: options.expectedBytes,
        signal: options.signal,
        now: this.now(),
        onWritten: (n) => {
          written = n;
        },
      });
    });
  }

  /**
   * Uploads a file, base64-encoding it into the JSON body while it is sent. The file is re-opened
   * per attempt. Retried only when the request provably did not reach the service; otherwise an
   * UploadOutcomeUnknownError tells the caller to reconcile before sending again.
   */
  async uploadParcel(filePath: string, upload: UploadOptions, options: UploadCallOptions = {}): Promise<{ parcelId: number }> {
    const endpoint = parcelEndpoints.upload;
    return this.retry.run(this.retryOptions(endpoint, options), async (headers) => {
      const { length, body } = await uploadBody(filePath, upload, options.onBodySent);
      const res = await this.http.send(endpoint.name, 'POST', endpoint.path, { ...headers, 'content-length': String(length) }, body, options.signal);
      const parcelId = (await readEnvelope(endpoint, res, { name: endpoint.name, now: this.now() })) as number;
      return { parcelId };
    });
  }

  /** Ends a bearer session (logout) and closes the connections. Safe to call twice. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const token = this.session.takeForLogout();
    if (token) {
      try {
        const res = await this.http.send(authEndpoints.logout.name, 'POST', authEndpoints.logout.path, { authorization: `Bearer ${token}` }, undefined);
        await res.body.dump();
      } catch (err) {
        this.logger?.debug({ endpoint: authEndpoints.logout.name, err: (err as Error).message }, 'logout failed while closing');
      }
    }
    await this.http.close();
  }

  // ------------------------------------------------------------------ internals

  private retryOptions(endpoint: EndpointDef, options: CallOptions): RetryOptions {
    return { endpoint: endpoint.name, idempotent: endpoint.idempotent, auth: endpoint.auth, signal: options.signal };
  }

  private tokenCall(endpoint: typeof authEndpoints.login | typeof authEndpoints.refresh, body: Record<string, unknown>): Promise<LoginResult> {
    return this.retry.run({ endpoint: endpoint.name, idempotent: true, auth: false }, async () => {
      const res = await this.http.send(endpoint.name, 'POST', endpoint.path, {}, JSON.stringify(body));
      return (await readEnvelope(endpoint, res, { name: endpoint.name, now: this.now() })) as LoginResult;
    });
  }
}

function buildRequest(endpoint: EndpointDef, request: Record<string, unknown>): { path: string; body: string | undefined } {
  const rest: Record<string, unknown> = { ...request };
  const path = endpoint.path.replace(/\{(\w+)\}/g, (_m, name: string) => {
    const v = rest[name];
    delete rest[name];
    if (v === undefined || v === null) throw new GridConfigError(`path parameter ${name} is required`, endpoint.name);
    return encodeURIComponent(String(v));
  });
  const fields = Object.entries(rest).filter(([, v]) => v !== undefined);
  if (endpoint.method === 'GET') {
    const qs = new URLSearchParams(fields.map(([k, v]): [string, string] => [k, String(v)])).toString();
    return { path: qs ? `${path}?${qs}` : path, body: undefined };
  }
  return { path, body: fields.length > 0 ? JSON.stringify(Object.fromEntries(fields)) : undefined };
}

function toSummary(p: ParcelIDInfo): ParcelSummary {
  return {
    parcelId: p.parcelId,
    fileName: p.fileName ?? null,
    ...(p.bytes !== undefined ? { bytes: p.bytes } : {}),
    ...(p.gridIdFrom !== undefined ? { gridIdFrom: p.gridIdFrom } : {}),
    ...(p.gridIdTo !== undefined ? { gridIdTo: p.gridIdTo } : {}),
    ...(p.created !== undefined ? { created: p.created } : {}),
    ...(p.status !== undefined ? { status: p.status } : {}),
  };
}
