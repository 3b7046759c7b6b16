/**
 * GridClient: the REST v2 client. Composes the HTTP channel (http.ts), the credentials
 * (session.ts), the attempt loop (retry-loop.ts), envelope decoding (envelope.ts) and streamed
 * transfer (transfer.ts); implements the pipelines' MailboxTransport and typed catalog calls.
 */
import type { Writable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import type { z } from 'zod';
import { auth as authEndpoints, catalog, matchEndpoint, parcels as parcelEndpoints, type EndpointDef } from './catalog/index.js';
import { apiErrorFrom, issuePath, readEnvelope, type ReadEnvelopeOptions } from './envelope.js';
import { scanList } from './list-stream.js';
import { DEFAULTS } from '../config/defaults.js';
import { GridApiError, GridConfigError, GridLimitError, GridResponseError, GridTransportError } from './errors.js';
import { HttpChannel, toTransportError, withCallDeadline, type HttpTimeouts } from './http.js';
import { DEFAULT_BACKOFF, type BackoffPolicy } from './retry.js';
import { RateGate } from './rate-gate.js';
import { RetryLoop, type RetryOptions } from './retry-loop.js';
import { Session, type GridAuth } from './session.js';
import { receiveParcel, uploadBody, type DownloadResultInfo, type UploadOptions } from './transfer.js';
import {
  decodeConfirmResult,
  decodeParcel,
  decodeParcelList,
  decodePartnerName,
  decodeSession,
  decodeUploadResult,
  ShapeWarnings,
} from './tolerant.js';
import {
  isDownloadTarget,
  type CallOptions,
  type DownloadOptions,
  type DownloadTarget,
  type MailboxTransport,
  type OutboxQuery,
  type ParcelSummary,
  type PendingInbox,
  type SessionContext,
  type UploadCallOptions,
} from './transport.js';
import type { LoginResult } from './wire.js';
import { errorFields } from '../errors/index.js';

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
  /** Protective limits on what the service may send (defaults: src/config/defaults.ts). */
  readonly limits?: Partial<ClientLimits>;
  /** Called when a 429 starts a pause of every request of this client (for a metric). */
  readonly onRateLimitPause?: (ms: number) => void;
}

/** One record of a list endpoint: the array's element, or the element of the object page's list. */
export type ListRow<E extends EndpointDef> = RowOf<z.output<E['response']>>;
type RowOf<O> = O extends readonly (infer R)[]
  ? R
  : ArrayElements<{ [K in keyof O as string extends K ? never : number extends K ? never : K]: O[K] }>;
type ArrayElements<O> = { [K in keyof O]: O[K] extends readonly (infer R)[] ? R : never }[keyof O];

export interface ClientLimits {
  readonly maxBodyBytes: number;
  readonly maxListEntries: number;
  readonly minBytesPerSecond: number;
  readonly rateWindowMs: number;
  readonly maxParcelBytes: number;
}

const realSleep = (ms: number, signal?: AbortSignal): Promise<void> => delay(ms, undefined, signal ? { signal } : {});

export class GridClient implements MailboxTransport {
  readonly baseUrl: string;
  private readonly http: HttpChannel;
  private readonly session: Session;
  private readonly retry: RetryLoop;
  private readonly now: () => number;
  private readonly logger: ClientLogger | undefined;
  private readonly shapes: ShapeWarnings;
  private readonly gate: RateGate;
  private readonly limits: ClientLimits;
  private readonly callMs: number;
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
    this.shapes = new ShapeWarnings(options.logger);
    this.limits = { ...DEFAULTS.api.limits, ...options.limits };
    this.callMs = options.timeouts?.callMs ?? DEFAULTS.api.timeouts.callMs;
    this.session = new Session(options.auth, (endpoint, body) => this.tokenCall(endpoint, body), this.now, this.logger);
    const sleep = options.sleep ?? realSleep;
    this.gate = new RateGate(this.now, sleep, options.onRateLimitPause);
    this.retry = new RetryLoop({
      session: this.session,
      gate: this.gate,
      maxAttempts: Math.max(1, options.maxAttempts ?? 3),
      backoff: { ...DEFAULT_BACKOFF, ...options.backoff },
      now: this.now,
      sleep,
      random: options.random ?? Math.random,
      logger: this.logger,
      isClosed: () => this.closed,
    });
  }

  /** Pauses of every request after a 429, so far. */
  get rateLimitPauses(): number {
    return this.gate.pauses;
  }

  /** Calls one catalog endpoint; returns its validated `data`. */
  async call<E extends EndpointDef>(
    endpoint: E,
    request: z.input<E['request']>,
    options: CallOptions = {},
  ): Promise<z.output<E['response']>> {
    const { path, body } = buildRequest(endpoint, request as Record<string, unknown>);
    return this.retry.run(this.retryOptions(endpoint, options), (headers) =>
      this.withDeadline(endpoint.name, options.signal, async (signal) => {
        const res = await this.http.send(endpoint.name, endpoint.method, path, headers, body, signal);
        return readEnvelope(endpoint, res, this.envelopeOptions(endpoint.name));
      }),
    ) as Promise<z.output<E['response']>>;
  }

  /**
   * One raw call for `gridsync call`: any method and path. Auth, retry and the envelope apply; the
   * data is returned as the service sent it. When the path is a known endpoint whose documented
   * shape the data does not match, `onShapeMismatch` hears where — the data is returned anyway.
   */
  async callRaw(
    method: string,
    path: string,
    body?: unknown,
    options: CallOptions & { onShapeMismatch?: (field: string, detail: string) => void } = {},
  ): Promise<unknown> {
    const match = matchEndpoint(method, path);
    const name = match?.endpoint.name ?? `${method.toUpperCase()} ${path}`;
    const idempotent = match?.endpoint.idempotent ?? method.toUpperCase() === 'GET';
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const data = await this.retry.run(
      { endpoint: name, idempotent, auth: match?.endpoint.auth ?? true, signal: options.signal },
      (headers) =>
        this.withDeadline(name, options.signal, async (signal) => {
          const res = await this.http.send(name, method.toUpperCase(), path, headers, payload, signal);
          return readEnvelope(undefined, res, this.envelopeOptions(name));
        }),
    );
    const check = match?.endpoint.response.safeParse(data ?? null);
    if (check && !check.success) {
      const issue = check.error.issues[0];
      options.onShapeMismatch?.(issuePath('data', issue?.path ?? []), issue?.message ?? 'does not match');
    }
    return data;
  }

  /** Iterates over every record of a list endpoint, page by page (both list shapes). */
  async *paginate<E extends EndpointDef>(
    endpoint: E,
    request: z.input<E['request']>,
    options: CallOptions = {},
  ): AsyncGenerator<ListRow<E>> {
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

  /**
   * The session's context from `POST /v2/auth/session`; a service without that endpoint (404) is
   * asked `GET /v2/users/me` instead. Tolerant: only `mailboxId` matters, and only to the caller.
   */
  async sessionContext(options: CallOptions = {}): Promise<SessionContext> {
    try {
      return decodeSession(catalog.auth.session.name, await this.callData(catalog.auth.session, {}, options), this.shapes);
    } catch (err) {
      if (!(err instanceof GridApiError && err.noSuchEndpoint)) throw err;
      this.logger?.warn(
        { endpoint: catalog.auth.session.name, httpStatus: 404 },
        'the service has no session endpoint; asking users/me for the default mailbox',
      );
      return decodeSession(catalog.users.me.name, await this.callData(catalog.users.me, {}, options), this.shapes);
    }
  }

  async pendingInbox(mailboxId: number, options: CallOptions = {}): Promise<PendingInbox> {
    const endpoint = catalog.parcels.pendingInboxList;
    const { data, total } = await this.callList(endpoint, { mailboxId }, options);
    const { parcels, unreadable } = decodeParcelList(endpoint.name, data, this.shapes);
    return { parcels, unreadable, omitted: Math.max(0, total - parcels.length - unreadable.length) };
  }

  async parcel(parcelId: number, options: CallOptions = {}): Promise<ParcelSummary> {
    const endpoint = catalog.parcels.get;
    const p = decodeParcel(endpoint.name, 'data', await this.callData(endpoint, { parcelId }, options), this.shapes);
    if (p.parcelId !== parcelId)
      throw new GridResponseError(endpoint.name, 200, 'data.parcelId', `asked for ${parcelId}, got ${p.parcelId}`);
    return p;
  }

  async confirmParcel(parcelId: number, options: CallOptions = {}): Promise<void> {
    const endpoint = catalog.parcels.confirm;
    decodeConfirmResult(endpoint.name, await this.callData(endpoint, { parcelId }, options), this.shapes);
  }

  /** The description of a grid ID's record (`GET /v2/ids/{gridId}`); another tenant's answers 403/404 and throws. */
  async partnerName(gridId: number, options: CallOptions = {}): Promise<string | undefined> {
    const endpoint = catalog.ids.get;
    return decodePartnerName(endpoint.name, gridId, await this.callData(endpoint, { gridId }, options), this.shapes);
  }

  async *outboxParcels(query: OutboxQuery, options: CallOptions = {}): AsyncGenerator<ParcelSummary> {
    const endpoint = catalog.parcels.outboxList;
    const perPage = 500;
    for (let pageNo = 1; ; pageNo++) {
      const { data, total } = await this.callList(
        endpoint,
        { mailboxId: query.mailboxId, beginDate: query.since, pageNo, recordsPerPage: perPage },
        options,
      );
      const { parcels, unreadable } = decodeParcelList(endpoint.name, data, this.shapes);
      if (unreadable[0]) throw unreadable[0].error;
      if (total > parcels.length)
        throw new GridLimitError(endpoint.name, 'api.limits.maxListEntries', this.limits.maxListEntries, `a page of ${total} records`);
      yield* parcels;
      if (total < perPage) return;
    }
  }

  /**
   * Downloads one parcel. With a DownloadTarget every failed attempt is discarded and the next one
   * starts in a fresh destination; a plain Writable is retried only until its first byte.
   */
  async downloadParcel(parcelId: number, target: DownloadTarget | Writable, options: DownloadOptions = {}): Promise<DownloadResultInfo> {
    const endpoint = parcelEndpoints.download;
    const body = JSON.stringify({ parcelId });
    const resettable = isDownloadTarget(target);
    let written = 0;
    const retry: RetryOptions = { ...this.retryOptions(endpoint, options), mayRetry: () => resettable || written === 0 };
    return this.retry.run(retry, (headers) =>
      this.withMinimumRate(
        endpoint.name,
        options.signal,
        () => written,
        async (signal) => {
          const res = await this.http.send(endpoint.name, 'POST', endpoint.path, headers, body, signal);
          if (res.statusCode !== 200) return (await readEnvelope(endpoint, res, this.envelopeOptions(endpoint.name))) as never;
          let writable: Writable;
          try {
            writable = resettable ? await target.openAttempt() : target;
          } catch (err) {
            res.body.destroy();
            throw err;
          }
          written = 0;
          try {
            return await receiveParcel(res, writable, {
              endpoint: endpoint.name,
              parcelId,
              expectedBytes: options.expectedBytes,
              maxBytes: options.expectedBytes ?? this.limits.maxParcelBytes,
              signal,
              now: this.now(),
              shapes: this.shapes,
              onWritten: (n) => {
                written = n;
              },
            });
          } catch (err) {
            if (resettable) await target.discardAttempt();
            throw err;
          }
        },
      ),
    );
  }

  /**
   * Runs one streamed attempt under the minimum transfer rate: over each window of
   * `limits.rateWindowMs` at least `minBytesPerSecond` must arrive, or the attempt is broken off
   * (a parcel trickled a byte a second would otherwise hold a cycle for ever).
   */
  private async withMinimumRate<T>(
    endpoint: string,
    outer: AbortSignal | undefined,
    progress: () => number,
    fn: (signal: AbortSignal) => Promise<T>,
  ): Promise<T> {
    const { minBytesPerSecond, rateWindowMs } = this.limits;
    const ctl = new AbortController();
    const onAbort = (): void => ctl.abort();
    outer?.addEventListener('abort', onAbort, { once: true });
    let mark = progress();
    const timer =
      minBytesPerSecond > 0
        ? setInterval(() => {
            const now = progress();
            if (now - mark < (minBytesPerSecond * rateWindowMs) / 1000) ctl.abort();
            mark = now;
          }, rateWindowMs)
        : undefined;
    try {
      return await fn(ctl.signal);
    } catch (err) {
      if (ctl.signal.aborted && !outer?.aborted) {
        throw new GridTransportError(
          endpoint,
          'GRIDSYNC_TOO_SLOW',
          `less than ${minBytesPerSecond} bytes/s over ${rateWindowMs} ms (api.limits.minBytesPerSecond)`,
          false,
          { cause: err },
        );
      }
      throw err;
    } finally {
      clearInterval(timer);
      outer?.removeEventListener('abort', onAbort);
    }
  }

  /**
   * Uploads a file, base64-encoding it into the JSON body while it is sent. The file is re-opened
   * per attempt. Retried only when the request provably did not reach the service; otherwise an
   * UploadOutcomeUnknownError tells the caller to reconcile before sending again.
   */
  async uploadParcel(filePath: string, upload: UploadOptions, options: UploadCallOptions = {}): Promise<{ parcelId: number }> {
    const endpoint = parcelEndpoints.upload;
    return this.retry.run(this.retryOptions(endpoint, options), async (headers) => {
      // Sending takes as long as the file needs; the answer, once the body is out, gets
      // timeouts.callMs (a trickled answer would otherwise hold the outbound cycle for ever).
      const ctl = new AbortController();
      const onAbort = (): void => ctl.abort();
      options.signal?.addEventListener('abort', onAbort, { once: true });
      let timer: NodeJS.Timeout | undefined;
      const bodySent = (): void => {
        timer = setTimeout(() => ctl.abort(), this.callMs);
        options.onBodySent?.();
      };
      try {
        const { length, body } = await uploadBody(filePath, upload, bodySent, options.calls);
        const res = await this.http.send(
          endpoint.name,
          'POST',
          endpoint.path,
          { ...headers, 'content-length': String(length) },
          body,
          ctl.signal,
        );
        const data = await readEnvelope(undefined, res, this.envelopeOptions(endpoint.name));
        return { parcelId: decodeUploadResult(endpoint.name, data, this.shapes) };
      } catch (err) {
        if (ctl.signal.aborted && !options.signal?.aborted) {
          throw new GridTransportError(
            endpoint.name,
            'GRIDSYNC_CALL_DEADLINE',
            `no complete answer within ${this.callMs} ms after the body was sent (api.timeouts.callMs)`,
            false,
            { cause: err },
          );
        }
        throw err;
      } finally {
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
      }
    });
  }

  /** Ends a bearer session (logout) and closes the connections. Safe to call twice. */
  serviceClockOffsetMs(): number | undefined {
    return this.http.clock.offsetMs();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const token = this.session.takeForLogout();
    if (token) {
      try {
        const res = await this.http.send(
          authEndpoints.logout.name,
          'POST',
          authEndpoints.logout.path,
          { authorization: `Bearer ${token}` },
          undefined,
        );
        await res.body.dump();
      } catch (err) {
        this.logger?.debug({ endpoint: authEndpoints.logout.name, ...errorFields(err) }, 'logout failed while closing');
      }
    }
    await this.http.close();
  }

  // ------------------------------------------------------------------ internals

  /** A catalog call whose `data` is returned unvalidated: the MailboxTransport methods decode it tolerantly. */
  private callData<E extends EndpointDef>(endpoint: E, request: z.input<E['request']>, options: CallOptions): Promise<unknown> {
    const { path, body } = buildRequest(endpoint, request as Record<string, unknown>);
    return this.retry.run(this.retryOptions(endpoint, options), (headers) =>
      this.withDeadline(endpoint.name, options.signal, async (signal) => {
        const res = await this.http.send(endpoint.name, endpoint.method, path, headers, body, signal);
        return readEnvelope(undefined, res, this.envelopeOptions(endpoint.name));
      }),
    );
  }

  /**
   * A list call read as it streams: at most `maxListEntries` records are kept, the rest only
   * counted. Returns the kept records and how many the list held.
   */
  private callList<E extends EndpointDef>(
    endpoint: E,
    request: z.input<E['request']>,
    options: CallOptions,
  ): Promise<{ data: unknown; total: number }> {
    const { path, body } = buildRequest(endpoint, request as Record<string, unknown>);
    return this.retry.run(this.retryOptions(endpoint, options), (headers) =>
      this.withDeadline(endpoint.name, options.signal, async (signal) => {
        const res = await this.http.send(endpoint.name, endpoint.method, path, headers, body, signal);
        if (res.statusCode >= 300) return (await readEnvelope(undefined, res, this.envelopeOptions(endpoint.name))) as never;
        let scanned;
        try {
          scanned = await scanList(res.body, {
            endpoint: endpoint.name,
            maxItems: this.limits.maxListEntries,
            maxValueBytes: this.limits.maxBodyBytes,
          });
        } catch (err) {
          res.body.destroy();
          throw toTransportError(endpoint.name, err);
        }
        const { members } = scanned;
        if (members.success !== true) throw apiErrorFrom(endpoint.name, res, members, this.now());
        return { data: scanned.items ?? members.data, total: scanned.total };
      }),
    );
  }

  private envelopeOptions(name: string): ReadEnvelopeOptions {
    return { name, now: this.now(), maxBodyBytes: this.limits.maxBodyBytes };
  }

  private withDeadline<T>(endpoint: string, outer: AbortSignal | undefined, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    return withCallDeadline(endpoint, this.callMs, outer, fn);
  }

  private retryOptions(endpoint: EndpointDef, options: CallOptions): RetryOptions {
    return { endpoint: endpoint.name, idempotent: endpoint.idempotent, auth: endpoint.auth, signal: options.signal };
  }

  private tokenCall(
    endpoint: typeof authEndpoints.login | typeof authEndpoints.refresh,
    body: Record<string, unknown>,
  ): Promise<LoginResult> {
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
