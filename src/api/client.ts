/**
 * GridClient: the REST v2 client. Composes the HTTP channel (http.ts), the credentials
 * (session.ts), the attempt loop (retry-loop.ts), envelope decoding (envelope.ts) and streamed
 * transfer (transfer.ts); implements the pipelines' MailboxTransport and typed catalog calls.
 */
import type { Writable } from 'node:stream';
import type { z } from 'zod';
import { catalog, matchEndpoint, type EndpointDef } from '@gridsync/protocol/catalog';
import { apiErrorFrom, issuePath, readEnvelope, type ReadEnvelopeOptions } from './envelope.js';
import { JsonShapeBudget } from './answer-shape.js';
import { scanList } from './list-stream.js';
import { ClientCore, contentCap, type ClientLimits, type CoreOptions } from './core.js';
import { GridApiError, GridConfigError, GridLimitError, GridResponseError } from './errors.js';
import { toTransportError } from './http.js';
import type { RetryOptions } from './retry-loop.js';
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
  statedMailbox,
} from './tolerant.js';
import {
  isDownloadTarget,
  openAttemptFor,
  type CallOptions,
  type PendingOptions,
  type DownloadOptions,
  type DownloadTarget,
  type MailboxTransport,
  type OutboxQuery,
  type ParcelSummary,
  type PendingInbox,
  type SessionContext,
  type UploadCallOptions,
} from './transport.js';
import type { LoginResult } from '@gridsync/protocol/wire';
import { PageGuard } from './page-guard.js';
import { listLimits } from './list-allowance.js';

const authEndpoints = catalog.auth;
const parcelEndpoints = catalog.parcels;

export { gridsyncVersion } from '../version.js';
export type { GridAuth } from './session.js';
export type { ClientLimits, ClientLogger } from './core.js';

export interface GridClientOptions extends CoreOptions {
  /** Service root without `/v2`, e.g. `https://api.example.com`. */
  readonly baseUrl: string;
  readonly auth: GridAuth;
}

/** One record of a list endpoint: the array's element, or the element of the object page's list. */
export type ListRow<E extends EndpointDef> = RowOf<z.output<E['response']>>;
type RowOf<O> = O extends readonly (infer R)[]
  ? R
  : ArrayElements<{ [K in keyof O as string extends K ? never : number extends K ? never : K]: O[K] }>;
type ArrayElements<O> = { [K in keyof O]: O[K] extends readonly (infer R)[] ? R : never }[keyof O];

const CALL = { call: true } as const;

export class GridClient implements MailboxTransport {
  readonly baseUrl: string;
  private readonly core: ClientCore<Record<string, string>>;
  private readonly session: Session;
  private readonly shapes: ShapeWarnings;

  constructor(options: GridClientOptions) {
    this.baseUrl = options.baseUrl;
    let session: Session | undefined;
    this.core = new ClientCore(new URL(options.baseUrl), options, (core) => {
      session = new Session(options.auth, (endpoint, body) => this.tokenCall(endpoint, body), core.now, core.logger);
      return session;
    });
    this.session = session as unknown as Session;
    this.shapes = new ShapeWarnings(options.logger);
  }

  /** Pauses of every request after a 429, so far. */
  get rateLimitPauses(): number {
    return this.core.rateLimitPauses;
  }

  overloadAnswers(): number {
    return this.core.overloadAnswers;
  }

  /** Calls one catalog endpoint; returns its validated `data`. */
  async call<E extends EndpointDef>(
    endpoint: E,
    request: z.input<E['request']>,
    options: CallOptions = {},
  ): Promise<z.output<E['response']>> {
    const { path, body } = buildRequest(endpoint, request as Record<string, unknown>);
    return this.core.run(this.retryOptions(endpoint, options), CALL, async (headers, { signal }) => {
      const res = await this.core.http.send(endpoint.name, endpoint.method, path, headers ?? {}, body, signal);
      return readEnvelope(endpoint, res, this.envelopeOptions(endpoint.name));
    }) as Promise<z.output<E['response']>>;
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
    const data = await this.core.run(
      { endpoint: name, idempotent, auth: match?.endpoint.auth ?? true, signal: options.signal },
      CALL,
      async (headers, { signal }) => {
        const res = await this.core.http.send(name, method.toUpperCase(), path, headers ?? {}, payload, signal);
        return readEnvelope(undefined, res, this.envelopeOptions(name));
      },
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
      this.core.logger?.warn(
        { endpoint: catalog.auth.session.name, httpStatus: 404 },
        'the service has no session endpoint; asking users/me for the default mailbox',
      );
      return decodeSession(catalog.users.me.name, await this.callData(catalog.users.me, {}, options), this.shapes);
    }
  }

  async pendingInbox(mailboxId: number, options: PendingOptions = {}): Promise<PendingInbox> {
    const endpoint = catalog.parcels.pendingInboxList;
    const { data, total } = await this.callList(endpoint, { mailboxId }, options, listLimits(this.core.limits, options.givenUp));
    const { parcels, unreadable } = decodeParcelList(endpoint.name, data, this.shapes, mailboxId);
    return { parcels, unreadable, omitted: Math.max(0, total - parcels.length - unreadable.length) };
  }

  async parcel(parcelId: number, options: CallOptions = {}): Promise<ParcelSummary> {
    const endpoint = catalog.parcels.get;
    const data = await this.callData(endpoint, { parcelId }, options);
    const p = decodeParcel(endpoint.name, 'data', data, this.shapes);
    if (p.parcelId !== parcelId)
      throw new GridResponseError(endpoint.name, 200, 'data.parcelId', `asked for ${parcelId}, got ${p.parcelId}`);
    const inbox = statedMailbox((data as Record<string, unknown>).mailboxId);
    return inbox === undefined ? p : { ...p, inboxMailboxId: inbox };
  }

  async confirmParcel(parcelId: number, options: CallOptions = {}): Promise<void> {
    const endpoint = catalog.parcels.confirm;
    decodeConfirmResult(endpoint.name, parcelId, await this.callData(endpoint, { parcelId }, options), this.shapes);
  }

  /** The description of a grid ID's record (`GET /v2/ids/{gridId}`); another tenant's answers 403/404 and throws. */
  async partnerName(gridId: number, options: CallOptions = {}): Promise<string | undefined> {
    const endpoint = catalog.ids.get;
    return decodePartnerName(endpoint.name, gridId, await this.callData(endpoint, { gridId }, options), this.shapes);
  }

  async *outboxParcels(query: OutboxQuery, options: CallOptions = {}): AsyncGenerator<ParcelSummary> {
    const endpoint = catalog.parcels.outboxList;
    const perPage = 500;
    const guard = new PageGuard(endpoint.name);
    for (let pageNo = 1; ; pageNo++) {
      const { data, total } = await this.callList(
        endpoint,
        { mailboxId: query.mailboxId, beginDate: query.since, pageNo, recordsPerPage: perPage },
        options,
      );
      const { parcels, unreadable } = decodeParcelList(endpoint.name, data, this.shapes, query.mailboxId);
      if (unreadable[0]) throw unreadable[0].error;
      if (total > parcels.length)
        throw new GridLimitError(endpoint.name, 'api.limits.maxListEntries', this.core.limits.maxListEntries, `a page of ${total} records`);
      guard.page(parcels.map((p) => p.parcelId));
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
    return this.core.run(retry, { transfer: () => written, onProgress: options.onProgress }, async (headers, { signal }) => {
      written = 0;
      const res = await this.core.http.send(endpoint.name, 'POST', endpoint.path, headers ?? {}, body, signal);
      if (res.statusCode !== 200) return (await readEnvelope(endpoint, res, this.envelopeOptions(endpoint.name))) as never;
      const writable = await openAttemptFor(target, res.body);
      try {
        return await receiveParcel(res, writable, {
          endpoint: endpoint.name,
          parcelId,
          expectedBytes: options.expectedBytes,
          bounds: { cap: contentCap(this.core.limits.maxParcelBytes, options.expectedBytes), roomBytes: options.roomBytes },
          signal,
          now: this.core.now(),
          limits: this.core.limits,
          shapes: this.shapes,
          onWritten: (n) => {
            written = n;
          },
        });
      } catch (err) {
        if (resettable) await target.discardAttempt();
        throw err;
      }
    });
  }

  /**
   * Uploads a file, base64-encoding it into the JSON body while it is sent. The file is re-opened
   * per attempt. Retried only when the request provably did not reach the service; otherwise an
   * UploadOutcomeUnknownError tells the caller to reconcile before sending again.
   */
  async uploadParcel(filePath: string, upload: UploadOptions, options: UploadCallOptions = {}): Promise<{ parcelId: number }> {
    const endpoint = parcelEndpoints.upload;
    // Sending takes as long as the line needs, at the minimum rate; the answer, once the body is
    // out, gets timeouts.callMs (a trickled answer would otherwise hold the outbound cycle for ever).
    return this.core.upload(this.retryOptions(endpoint, options), options.onBodySent, async (headers, signal, progress) => {
      const { length, body } = await uploadBody(filePath, upload, progress, options.calls);
      const res = await this.core.http.send(
        endpoint.name,
        'POST',
        endpoint.path,
        { ...headers, 'content-length': String(length) },
        body,
        signal,
      );
      const data = await readEnvelope(undefined, res, this.envelopeOptions(endpoint.name));
      return { parcelId: decodeUploadResult(endpoint.name, data, this.shapes) };
    });
  }

  serviceClockOffsetMs(): number | undefined {
    return this.core.http.clock.offsetMs();
  }

  /** Ends a bearer session (logout) and closes the connections. Safe to call twice. */
  close(): Promise<void> {
    const logout = authEndpoints.logout;
    return this.core.close(
      () => this.session.takeForLogout(),
      async (token, signal) => {
        const res = await this.core.http.send(logout.name, 'POST', logout.path, { authorization: `Bearer ${token}` }, undefined, signal);
        await res.body.dump();
      },
      { endpoint: logout.name },
    );
  }

  // ------------------------------------------------------------------ internals

  /** A catalog call whose `data` is returned unvalidated: the MailboxTransport methods decode it tolerantly. */
  private callData<E extends EndpointDef>(endpoint: E, request: z.input<E['request']>, options: CallOptions): Promise<unknown> {
    const { path, body } = buildRequest(endpoint, request as Record<string, unknown>);
    return this.core.run(this.retryOptions(endpoint, options), CALL, async (headers, { signal }) => {
      const res = await this.core.http.send(endpoint.name, endpoint.method, path, headers ?? {}, body, signal);
      return readEnvelope(undefined, res, this.envelopeOptions(endpoint.name));
    });
  }

  /**
   * A list call read as it streams: at most `maxListEntries` records are kept, the rest only
   * counted. Returns the kept records and how many the list held.
   */
  private callList<E extends EndpointDef>(
    endpoint: E,
    request: z.input<E['request']>,
    options: CallOptions,
    limits: ClientLimits = this.core.limits,
  ): Promise<{ data: unknown; total: number }> {
    const { path, body } = buildRequest(endpoint, request as Record<string, unknown>);
    return this.core.run(this.retryOptions(endpoint, options), CALL, async (headers, { signal }) => {
      const res = await this.core.http.send(endpoint.name, endpoint.method, path, headers ?? {}, body, signal);
      if (res.statusCode >= 300) return (await readEnvelope(undefined, res, this.envelopeOptions(endpoint.name))) as never;
      let scanned;
      try {
        scanned = await scanList(res.body, {
          endpoint: endpoint.name,
          maxItems: limits.maxListEntries,
          maxKeptBytes: limits.maxBodyBytes,
          shape: new JsonShapeBudget(endpoint.name, limits),
        });
      } catch (err) {
        res.body.destroy();
        throw toTransportError(endpoint.name, err);
      }
      const { members } = scanned;
      if (members.success !== true) throw apiErrorFrom(endpoint.name, res, members, this.core.now());
      return { data: scanned.items ?? members.data, total: scanned.total };
    });
  }

  private envelopeOptions(name: string): ReadEnvelopeOptions {
    return { name, now: this.core.now(), limits: this.core.limits };
  }

  private retryOptions(endpoint: EndpointDef, options: CallOptions): RetryOptions {
    return {
      endpoint: endpoint.name,
      idempotent: endpoint.idempotent,
      auth: endpoint.auth,
      signal: options.signal,
      mailbox: options.mailbox,
    };
  }

  private tokenCall(
    endpoint: typeof authEndpoints.login | typeof authEndpoints.refresh,
    body: Record<string, unknown>,
  ): Promise<LoginResult> {
    const shared = { endpoint: endpoint.name, idempotent: true, auth: false, signal: this.core.closingSignal };
    return this.core.run(shared, CALL, async (_none, { signal }) => {
      const res = await this.core.http.send(endpoint.name, 'POST', endpoint.path, {}, JSON.stringify(body), signal);
      return (await readEnvelope(endpoint, res, this.envelopeOptions(endpoint.name))) as LoginResult;
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
