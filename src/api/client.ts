/**
 * GridClient: the typed client of the REST v2 interface. Transport (undici, keep-alive, timeouts),
 * auth (API key, or login → bearer with refresh and one re-login), the retry rules of SPEC.md, the
 * envelope validated with zod against the catalog, pagination, and streamed parcel transfer in
 * both directions (memory does not grow with the parcel size).
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { Readable, type Writable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { Pool, type Dispatcher } from 'undici';
import type { z } from 'zod';
import { Base64Decoder, Base64Encoder, InvalidBase64Error, base64Length, maxDecodedLength } from './base64.js';
import { auth as authEndpoints, parcels as parcelEndpoints } from './catalog/index.js';
import { matchEndpoint, type EndpointDef } from './catalog/index.js';
import {
  ContentIntegrityError,
  GridApiError,
  GridConfigError,
  GridError,
  GridResponseError,
  GridTransportError,
  UploadOutcomeUnknownError,
} from './errors.js';
import { JsonStreamError, readJsonStreaming } from './json-stream.js';
import { DEFAULT_BACKOFF, decideRetry, parseRetryAfter, provablyNotSent, retryDelay, type BackoffPolicy } from './retry.js';
import { Envelope, type LoginResult } from './wire.js';

export type GridAuth = { readonly apiKey: string } | { readonly login: string; readonly password: string };

export interface ClientLogger {
  warn(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

export interface GridClientOptions {
  /** Service root without `/v2`, e.g. `https://api.example.com`. */
  readonly baseUrl: string;
  readonly auth: GridAuth;
  /** Attempts per call, the first included. Default 3 (SPEC "Errors"). */
  readonly maxAttempts?: number;
  readonly timeouts?: { readonly connectMs?: number; readonly headersMs?: number; readonly bodyMs?: number };
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

export interface CallOptions {
  readonly signal?: AbortSignal;
}

export interface DownloadResultInfo {
  readonly parcelId: number;
  readonly fileName: string | null;
  /** Decoded byte count actually written. */
  readonly bytes: number;
  /** `bytes` (or `size`) as the response declared it. */
  readonly declaredBytes?: number;
  readonly sha256: string;
}

export interface UploadCallOptions extends CallOptions {
  /** Called once the whole body was handed to the socket (the crash tests' `out.request-sent`). */
  readonly onBodySent?: () => void;
}

export interface DownloadOptions extends CallOptions {
  /** Byte count known from the list: verified too. */
  readonly expectedBytes?: number;
}

export interface UploadOptions {
  readonly fileName: string;
  readonly gridIdFrom?: number;
  readonly gridIdTo?: number;
  readonly mailboxId?: number;
  /** Send `bytes` for server-side verification. Default true. */
  readonly sendBytes?: boolean;
}

interface BearerSession {
  readonly token: string;
  readonly refreshToken?: string;
  readonly issuedAt: number;
  readonly expiresAt: number;
}

interface RawResponse {
  readonly statusCode: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Dispatcher.ResponseData['body'];
}

type RequestBody = string | (() => AsyncIterable<string | Uint8Array>) | undefined;

const LOOPBACK = new Set(['localhost', '127.0.0.1', '::1', '[::1]']);
const MAX_ERROR_BODY = 64 * 1024;
let cachedVersion: string | undefined;

/** gridsync's version from package.json, read on first use (no I/O at import time). */
export function gridsyncVersion(): string {
  cachedVersion ??= (createRequire(import.meta.url)('../../package.json') as { version: string }).version;
  return cachedVersion;
}

const realSleep = (ms: number, signal?: AbortSignal): Promise<void> => delay(ms, undefined, { signal });

/** Dotted path of a zod issue: `data[3].parcelId`. */
function issuePath(prefix: string, path: readonly PropertyKey[]): string {
  return path.reduce<string>((acc, seg) => (typeof seg === 'number' ? `${acc}[${seg}]` : `${acc}.${String(seg)}`), prefix);
}

export class GridClient {
  readonly baseUrl: string;
  private readonly origin: string;
  private readonly prefix: string;
  private readonly pool: Pool;
  private readonly maxAttempts: number;
  private readonly backoff: BackoffPolicy;
  private readonly now: () => number;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  private readonly random: () => number;
  private readonly logger: ClientLogger | undefined;
  private readonly userAgent: string;
  private session: BearerSession | undefined;
  private sessionPromise: Promise<BearerSession> | undefined;
  private closed = false;

  constructor(private readonly options: GridClientOptions) {
    const url = new URL(options.baseUrl);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new GridConfigError(`unsupported base URL scheme ${url.protocol}`, 'client');
    if (url.protocol === 'http:' && !LOOPBACK.has(url.hostname) && !options.allowInsecureHttp) {
      throw new GridConfigError(
        `refusing plain http:// to ${url.hostname}: credentials and EDI content would travel unencrypted; use https:// or set allowInsecureHttp`,
        'client',
      );
    }
    if ('apiKey' in options.auth ? !options.auth.apiKey : !options.auth.login || !options.auth.password) {
      throw new GridConfigError('no credentials: give an API key, or login and password', 'client');
    }
    this.baseUrl = options.baseUrl;
    this.origin = url.origin;
    this.prefix = url.pathname.replace(/\/+$/, '');
    this.maxAttempts = Math.max(1, options.maxAttempts ?? 3);
    this.backoff = { ...DEFAULT_BACKOFF, ...options.backoff };
    this.now = options.now ?? Date.now;
    this.sleep = options.sleep ?? realSleep;
    this.random = options.random ?? Math.random;
    this.logger = options.logger;
    this.userAgent = `gridsync/${gridsyncVersion()}`;
    const t = options.timeouts ?? {};
    // TLS verification stays at undici's default (on); there is deliberately no option to turn it off.
    this.pool = new Pool(this.origin, {
      connections: options.connections ?? 8,
      keepAliveTimeout: 30_000,
      connect: { timeout: t.connectMs ?? 10_000 },
      headersTimeout: t.headersMs ?? 60_000,
      bodyTimeout: t.bodyMs ?? 60_000,
    });
  }

  /** Calls one catalog endpoint; returns its validated `data`. */
  async call<E extends EndpointDef>(endpoint: E, request: z.input<E['request']>, options: CallOptions = {}): Promise<z.output<E['response']>> {
    const { path, body } = this.buildRequest(endpoint, request as Record<string, unknown>);
    return this.withRetry(endpoint.name, endpoint.idempotent, endpoint.auth, options.signal, async (headers) => {
      const res = await this.send(endpoint.name, endpoint.method, path, headers, body, options.signal);
      return this.readEnvelope(endpoint, res);
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
    return this.withRetry(name, idempotent, match?.endpoint.auth ?? true, options.signal, async (headers) => {
      const res = await this.send(name, method.toUpperCase(), path, headers, payload, options.signal);
      return this.readEnvelope(match?.endpoint, res, name);
    });
  }

  /** Iterates over every record of a list endpoint, page by page (both list shapes of SPEC.md). */
  async *paginate<E extends EndpointDef>(endpoint: E, request: z.input<E['request']>, options: CallOptions = {}): AsyncGenerator<unknown> {
    if (!endpoint.list) throw new GridConfigError(`${endpoint.name} is not a paged list`, endpoint.name);
    const base = request as Record<string, unknown>;
    const perPage = typeof base.recordsPerPage === 'number' ? base.recordsPerPage : endpoint.list.kind === 'object' ? 100 : 25;
    for (let pageNo = typeof base.pageNo === 'number' ? base.pageNo : 1; ; pageNo++) {
      const data = (await this.call(endpoint, { ...base, pageNo, recordsPerPage: perPage } as z.input<E['request']>, options)) as unknown;
      if (endpoint.list.kind === 'array') {
        const rows = data as unknown[];
        yield* rows;
        if (rows.length < perPage) return;
      } else {
        const page = data as Record<string, unknown> & { totalRecords: number };
        const rows = (page[endpoint.list.key] as unknown[]) ?? [];
        yield* rows;
        if (rows.length === 0 || pageNo * perPage >= page.totalRecords) return;
      }
    }
  }

  /**
   * Downloads one parcel, decoding the base64 content while it arrives into `writable` (which is
   * neither ended nor closed: the caller fsyncs and closes it). Verifies base64, completeness and
   * the declared byte count. Retried only until the first content byte was written; after that a
   * failure is thrown and the caller restarts the parcel from scratch.
   */
  async downloadParcel(parcelId: number, writable: Writable, options: DownloadOptions = {}): Promise<DownloadResultInfo> {
    const endpoint = parcelEndpoints.download;
    const body = JSON.stringify({ parcelId });
    let written = 0;
    return this.withRetry(endpoint.name, true, true, options.signal, async (headers) => {
      const res = await this.send(endpoint.name, 'POST', endpoint.path, headers, body, options.signal);
      if (res.statusCode !== 200) return this.readEnvelope(endpoint, res) as never;
      const decoder = new Base64Decoder();
      const hash = createHash('sha256');
      const slabs = new SlabPool();
      const writeOut = async (text: string): Promise<void> => {
        const slab = await slabs.take(maxDecodedLength(text.length));
        const buf = decoder.push(text, slab);
        if (buf.length === 0) return slabs.give(slab);
        hash.update(buf);
        written += buf.length;
        // The slab goes back to the pool once the writable is done with it (its write callback).
        if (!writable.write(buf, () => slabs.give(slab))) await once(writable, 'drain', { signal: options.signal });
      };
      let parsed: { value: unknown; streamedFieldSeen: boolean };
      try {
        parsed = await readJsonStreaming(res.body, {
          streamField: ['data', 'content'],
          onChunk: (text) => writeOut(text),
        });
        decoder.end();
      } catch (err) {
        res.body.destroy();
        throw this.downloadFailure(endpoint.name, parcelId, err, written > 0);
      }
      const envelope = Envelope.safeParse(parsed.value);
      if (!envelope.success || !envelope.data.success) throw this.apiErrorFrom(endpoint.name, res, parsed.value);
      const data = (envelope.data.data ?? {}) as Record<string, unknown>;
      if (!parsed.streamedFieldSeen) throw new GridResponseError(endpoint.name, 200, 'data.content', 'missing');
      const declared = typeof data.bytes === 'number' ? data.bytes : typeof data.size === 'number' ? data.size : undefined;
      for (const [what, n] of [['declared', declared], ['listed', options.expectedBytes]] as const) {
        if (n !== undefined && n !== decoder.bytes) {
          throw new ContentIntegrityError(endpoint.name, parcelId, 'byte-mismatch', `decoded ${decoder.bytes} bytes, ${what} ${n}`);
        }
      }
      if (data.parcelId !== undefined && Number(data.parcelId) !== parcelId) {
        throw new GridResponseError(endpoint.name, 200, 'data.parcelId', `asked for ${parcelId}, got ${String(data.parcelId)}`);
      }
      return {
        parcelId,
        fileName: typeof data.fileName === 'string' ? data.fileName : null,
        bytes: decoder.bytes,
        ...(declared !== undefined ? { declaredBytes: declared } : {}),
        sha256: hash.digest('hex'),
      };
    }, () => written === 0);
  }

  /**
   * Uploads a file, base64-encoding it into the JSON body while it is sent. The file is re-opened
   * per attempt. Retried only when the request provably did not reach the service; otherwise an
   * UploadOutcomeUnknownError tells the caller to reconcile before sending again.
   */
  async uploadParcel(filePath: string, upload: UploadOptions, options: UploadCallOptions = {}): Promise<{ parcelId: number }> {
    const endpoint = parcelEndpoints.upload;
    return this.withRetry(endpoint.name, false, true, options.signal, async (headers) => {
      const size = (await fs.promises.stat(filePath)).size;
      const head: Record<string, unknown> = { fileName: upload.fileName };
      if (upload.sendBytes !== false) head.bytes = size;
      if (upload.gridIdFrom !== undefined) head.gridIdFrom = upload.gridIdFrom;
      if (upload.gridIdTo !== undefined) head.gridIdTo = upload.gridIdTo;
      if (upload.mailboxId !== undefined) head.mailboxId = upload.mailboxId;
      const prefix = `${JSON.stringify(head).slice(0, -1)},"content":"`;
      const suffix = '"}';
      const length = Buffer.byteLength(prefix) + base64Length(size) + suffix.length;
      const body = async function* (): AsyncGenerator<string> {
        yield prefix;
        const encoder = new Base64Encoder();
        let read = 0;
        for await (const chunk of fs.createReadStream(filePath, { highWaterMark: 64 * 1024 })) {
          read += (chunk as Buffer).length;
          yield encoder.push(chunk as Buffer);
        }
        if (read !== size) throw new Error(`${filePath} changed size during the upload (${size} → ${read} bytes)`);
        yield encoder.end() + suffix;
        options.onBodySent?.();
      };
      const res = await this.send(endpoint.name, 'POST', endpoint.path, { ...headers, 'content-length': String(length) }, body, options.signal);
      const parcelId = (await this.readEnvelope(endpoint, res)) as number;
      return { parcelId };
    });
  }

  /** Ends a bearer session (logout) and closes the connections. Safe to call twice. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const session = this.session;
    this.session = undefined;
    if (session) {
      try {
        const res = await this.send(authEndpoints.logout.name, 'POST', authEndpoints.logout.path, { authorization: `Bearer ${session.token}` }, undefined);
        await res.body.dump();
      } catch (err) {
        this.logger?.debug({ endpoint: authEndpoints.logout.name, err: (err as Error).message }, 'logout failed while closing');
      }
    }
    await this.pool.close();
  }

  // ------------------------------------------------------------------ internals

  private buildRequest(endpoint: EndpointDef, request: Record<string, unknown>): { path: string; body: string | undefined } {
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

  /**
   * The attempt loop: auth headers, one attempt, then the retry decision. `mayRetry` lets the
   * download stop retrying once it has written content.
   */
  private async withRetry<T>(
    endpointName: string,
    idempotent: boolean,
    needsAuth: boolean,
    signal: AbortSignal | undefined,
    attempt: (headers: Record<string, string>) => Promise<T>,
    mayRetry: () => boolean = () => true,
  ): Promise<T> {
    if (this.closed) throw new GridConfigError('the client is closed', endpointName);
    let reloggedIn = false;
    for (let n = 1; ; n++) {
      const attemptStart = this.now();
      try {
        const headers = needsAuth ? await this.authHeaders() : {};
        return await attempt(headers);
      } catch (err) {
        if (signal?.aborted || (err as Error).name === 'AbortError') throw err;
        if (this.isExpiredSession(err) && !reloggedIn) {
          // One re-login on InvalidSession, then fail (SPEC / API-NOTES §2). Does not count as an attempt.
          reloggedIn = true;
          this.session = undefined;
          n--;
          continue;
        }
        const decision = decideRetry(err, idempotent);
        if (decision === 'outcome-unknown') throw new UploadOutcomeUnknownError(endpointName, attemptStart, err);
        // A 2xx whose body could not be read: the service acted, the answer was lost.
        if (!idempotent && err instanceof GridResponseError && err.httpStatus < 300) throw new UploadOutcomeUnknownError(endpointName, attemptStart, err);
        if (decision === 'fail' || n >= this.maxAttempts || !mayRetry()) throw err;
        const retryAfter = err instanceof GridApiError ? err.retryAfterMs : undefined;
        const wait = retryDelay(n, this.random(), this.backoff, retryAfter);
        this.logger?.warn({ endpoint: endpointName, attempt: n, maxAttempts: this.maxAttempts, delayMs: wait, err: (err as Error).message }, 'request failed, retrying');
        await this.sleep(wait, signal);
      }
    }
  }

  private isExpiredSession(err: unknown): boolean {
    return 'login' in this.options.auth && err instanceof GridApiError && err.httpStatus === 401 && err.errorCode === 'InvalidSession';
  }

  private async authHeaders(): Promise<Record<string, string>> {
    const a = this.options.auth;
    if ('apiKey' in a) return { 'x-api-key': a.apiKey };
    const session = await this.bearer();
    return { authorization: `Bearer ${session.token}` };
  }

  /** A valid bearer session: log in, or refresh when less than min(5 min, 10 % of the lifetime) remains. */
  private async bearer(): Promise<BearerSession> {
    const s = this.session;
    const now = this.now();
    if (s) {
      const margin = Math.min(5 * 60_000, (s.expiresAt - s.issuedAt) / 10);
      if (s.expiresAt - now > margin) return s;
    }
    this.sessionPromise ??= (async () => {
      try {
        let next: BearerSession | undefined;
        if (s?.refreshToken) {
          next = await this.tokenCall(authEndpoints.refresh, { refreshToken: s.refreshToken }).catch((err: unknown) => {
            this.logger?.warn({ endpoint: authEndpoints.refresh.name, err: (err as Error).message }, 'token refresh failed; logging in again');
            return undefined;
          });
        }
        next ??= await this.tokenCall(authEndpoints.login, this.options.auth as { login: string; password: string });
        this.session = next;
        return next;
      } finally {
        this.sessionPromise = undefined;
      }
    })();
    return this.sessionPromise;
  }

  private async tokenCall(endpoint: typeof authEndpoints.login | typeof authEndpoints.refresh, body: Record<string, unknown>): Promise<BearerSession> {
    const issuedAt = this.now();
    const result = await this.withRetry(endpoint.name, true, false, undefined, async () => {
      const res = await this.send(endpoint.name, 'POST', endpoint.path, {}, JSON.stringify(body));
      return (await this.readEnvelope(endpoint, res)) as LoginResult;
    });
    const expiresAt = Date.parse(result.expiresAt);
    return {
      token: result.token,
      ...(result.refreshToken ? { refreshToken: result.refreshToken } : {}),
      issuedAt,
      expiresAt: Number.isNaN(expiresAt) ? issuedAt + 5 * 60_000 : expiresAt,
    };
  }

  private async send(
    endpointName: string,
    method: string,
    path: string,
    headers: Record<string, string>,
    body: RequestBody,
    signal?: AbortSignal,
  ): Promise<RawResponse> {
    const h: Record<string, string> = { 'user-agent': this.userAgent, accept: 'application/json', ...headers };
    if (body !== undefined) h['content-type'] = 'application/json';
    try {
      const res = await this.pool.request({
        path: this.prefix + path,
        method: method as Dispatcher.HttpMethod,
        headers: h,
        body: typeof body === 'function' ? Readable.from(body(), { objectMode: false }) : body,
        signal,
      });
      return res;
    } catch (err) {
      throw this.transportError(endpointName, err);
    }
  }

  private transportError(endpointName: string, err: unknown): Error {
    if (err instanceof GridError || (err as Error).name === 'AbortError') return err as Error;
    const code = (err as { code?: string }).code ?? 'UNKNOWN';
    return new GridTransportError(endpointName, code, (err as Error).message, provablyNotSent(code), { cause: err });
  }

  private downloadFailure(endpointName: string, parcelId: number, err: unknown, wroteContent: boolean): Error {
    if (err instanceof InvalidBase64Error) return new ContentIntegrityError(endpointName, parcelId, 'invalid-base64', err.message, { cause: err });
    if (err instanceof JsonStreamError) {
      return new ContentIntegrityError(endpointName, parcelId, err.reason === 'truncated' ? 'truncated' : 'malformed', err.message, { cause: err });
    }
    const e = this.transportError(endpointName, err);
    if (e instanceof GridTransportError && wroteContent) {
      return new ContentIntegrityError(endpointName, parcelId, 'truncated', `the body broke off: ${e.message}`, { cause: e });
    }
    return e;
  }

  /** Reads a (small) JSON body and returns the validated `data`, or throws the right typed error. */
  private async readEnvelope(endpoint: EndpointDef | undefined, res: RawResponse, name = endpoint?.name ?? 'unknown'): Promise<unknown> {
    let text: string;
    try {
      text = await readLimited(res.body, res.statusCode >= 400 ? MAX_ERROR_BODY : Number.POSITIVE_INFINITY);
    } catch (err) {
      throw this.transportError(name, err);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      if (res.statusCode >= 400) throw this.apiErrorFrom(name, res, undefined, text);
      throw new GridResponseError(name, res.statusCode, '(body)', text.length === 0 ? 'empty body' : `not JSON: ${text.slice(0, 80)}`);
    }
    const envelope = Envelope.safeParse(json);
    if (!envelope.success || res.statusCode >= 400 || !envelope.data.success) {
      if (res.statusCode < 400 && !envelope.success) {
        const issue = envelope.error.issues[0];
        throw new GridResponseError(name, res.statusCode, issuePath('(envelope)', issue?.path ?? []), issue?.message ?? 'not the envelope');
      }
      throw this.apiErrorFrom(name, res, json);
    }
    if (!endpoint) return envelope.data.data;
    const data = endpoint.response.safeParse(envelope.data.data ?? null);
    if (!data.success) {
      const issue = data.error.issues[0];
      throw new GridResponseError(name, res.statusCode, issuePath('data', issue?.path ?? []), issue?.message ?? 'does not match');
    }
    return data.data;
  }

  private apiErrorFrom(name: string, res: RawResponse, json: unknown, text?: string): GridApiError {
    const retryAfterMs = parseRetryAfter(res.headers['retry-after'], this.now());
    const o = (json && typeof json === 'object' ? json : {}) as Record<string, unknown>;
    // Not every error body is the envelope (a proxy page, problem-details): fall back to the status.
    const errorCode = typeof o.errorCode === 'string' && o.errorCode !== '' ? o.errorCode : null;
    const message =
      typeof o.message === 'string' ? o.message : typeof o.detail === 'string' ? o.detail : typeof o.title === 'string' ? o.title : (text ?? '').slice(0, 200).trim();
    return new GridApiError(name, res.statusCode, errorCode, message, retryAfterMs);
  }
}

/**
 * A few reusable buffers for decoded content. Allocating a fresh Buffer per chunk made external
 * memory, and so peak RSS, climb by tens of MB before V8 collected them.
 */
class SlabPool {
  private readonly free: Buffer[] = [];
  private readonly waiting: (() => void)[] = [];
  private created = 0;

  constructor(
    private readonly slabBytes = 256 * 1024,
    private readonly max = 8,
  ) {}

  async take(minBytes: number): Promise<Buffer> {
    if (minBytes > this.slabBytes) return Buffer.allocUnsafe(minBytes);
    for (;;) {
      const slab = this.free.pop();
      if (slab) return slab;
      if (this.created < this.max) {
        this.created++;
        return Buffer.allocUnsafe(this.slabBytes);
      }
      await new Promise<void>((r) => this.waiting.push(r));
    }
  }

  give(slab: Buffer): void {
    if (slab.length !== this.slabBytes) return;
    this.free.push(slab);
    this.waiting.shift()?.();
  }
}

async function readLimited(body: AsyncIterable<Uint8Array> & { destroy(): void }, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > limit) {
      body.destroy();
      break;
    }
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks).toString('utf8');
}
