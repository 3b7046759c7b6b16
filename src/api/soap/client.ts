/**
 * The client of the SOAP 4.1 interface: any operation of the definition by name, and the
 * MailboxTransport the pipelines use, so the daemon runs over SOAP exactly as over REST.
 *
 * - Credentials: an API key is sent as SessionID on every call (no Login/Logout); with a login and
 *   password the client logs in once, reuses the session, logs in again once on a session fault
 *   and repeats the call once, and logs out on close.
 * - Retries as over REST, mapped onto SOAP: HTTP 429/503 and network failures as they are; a fault
 *   is decided on its code (`soap:Server` may pass later, `soap:Client` never does), not on its
 *   HTTP 500. An upload that may have reached the service is never repeated: its outcome is unknown
 *   and the caller reconciles through the outbox lists.
 * - Content is streamed both ways: the request envelope is written around a base64 encoder fed
 *   from the file, the response is parsed by saxes with the content element decoded straight into
 *   the destination. Memory does not grow with the parcel.
 * - Parcel ids are exact decimal strings on the wire side; the transport hands numbers to the
 *   journal and refuses an id beyond 2^53 rather than rounding it.
 */
import { createHash } from 'node:crypto';
import { Readable, type Writable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { Pool, type Dispatcher } from 'undici';
import { DEFAULTS } from '../../config/defaults.js';
import { gridsyncVersion } from '../../version.js';
import { Base64Decoder, InvalidBase64Error, base64Length, maxDecodedLength } from '../base64.js';
import {
  ContentIntegrityError,
  GridApiError,
  GridConfigError,
  GridResponseError,
  GridTransportError,
  UploadOutcomeUnknownError,
} from '../errors.js';
import { toTransportError, withCallDeadline } from '../http.js';
import { DEFAULT_BACKOFF, decideRetry, parseRetryAfter, retryDelay, type BackoffPolicy } from '../retry.js';
import type { GridAuth } from '../session.js';
import {
  isDownloadTarget,
  type CallOptions,
  type DownloadOptions,
  type DownloadResultInfo,
  type DownloadTarget,
  type MailboxTransport,
  type OutboxQuery,
  type ParcelSummary,
  type PendingInbox,
  type SessionContext,
  type UploadCallOptions,
  type UploadOptions,
} from '../transport.js';
import { SoapFaultError } from './errors.js';
import { encodedContent } from '../transfer.js';
import { FileCalls } from '../../files/index.js';
import { SOAP_PATH, operationByName, type OperationDef } from './schema.js';
import {
  STREAM_SLOT,
  SoapXmlError,
  child,
  decodeValue,
  isFault,
  readFault,
  readXml,
  soapPayload,
  writeRequest,
  type XmlNode,
} from './xml.js';
import { errorFields } from '../../errors/index.js';

export interface SoapClientLogger {
  warn(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

export interface SoapClientOptions {
  /** The service address: the `…/GridOS.asmx` URL, or a root to which `/v4.1/prod/GridOS.asmx` is added. */
  readonly url: string;
  readonly auth: GridAuth;
  /** Attempts per call, the first included. Default 3. */
  readonly maxAttempts?: number;
  readonly timeouts?: { readonly connectMs?: number; readonly headersMs?: number; readonly bodyMs?: number; readonly callMs?: number };
  readonly connections?: number;
  readonly backoff?: Partial<BackoffPolicy>;
  readonly now?: () => number;
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly random?: () => number;
  readonly logger?: SoapClientLogger;
  /** Plain http:// to a host that is not loopback is refused unless true. */
  readonly allowInsecureHttp?: boolean;
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '::1', '[::1]']);
const MAX_ERROR_BODY = 64 * 1024;
const CONTENT_OUT: ReadonlySet<string> = new Set(['Content', 'ContentBase64String']);
/** Base64 characters decoded per slab (a multiple of 4). */
const SLAB_CHARS = 256 * 1024;
/** Reconciliation looks this far past now, for a service clock that runs ahead. */
const RECONCILE_AHEAD_MS = 5 * 60_000;
const OUTBOX_PAGE = 500;

/** Operations safe to repeat after they may have reached the service. */
const IDEMPOTENT =
  /^(Version|NowUTC|WhoAmI|SessionLog|ParcelInBox|ParcelOutBox|ParcelInfo|ParcelManifest|ParcelFind|ParcelDownload(A|NoUpdate|NoUpdateA|Confirm|Reset)?$|NetworkInfo|NetworkList|MailboxInfo|MailboxList|TPInfo|TPList|TPSearch|InterconnectInfo|InterconnectList|InterchangeInBox|InterchangeOutBox|InterchangeInfo|UserInfo|UserList|UserGetAPIKey|Login$)/;

/** The `…/GridOS.asmx` URL for a configured address. */
export function soapUrl(base: string): URL {
  const u = new URL(base);
  if (!/\.asmx$/i.test(u.pathname)) u.pathname = u.pathname.replace(/\/+$/, '') + SOAP_PATH;
  u.search = '';
  return u;
}

function op(name: string): OperationDef {
  const def = operationByName(name);
  if (!def) throw new GridConfigError(`unknown SOAP operation ${name}`, name);
  return def;
}

/** A parcel id from the wire (exact decimal) as the number the journal keeps. */
function journalId(operation: string, value: unknown): number {
  const s = String(value ?? '');
  const n = Number(s);
  if (!/^\d+$/.test(s) || !Number.isSafeInteger(n))
    throw new GridResponseError(operation, 200, 'ParcelID', `${s} is not a parcel id gridsync can journal exactly (above 2^53)`);
  return n;
}

type Rec = Record<string, unknown>;

function summary(operation: string, r: Rec): ParcelSummary {
  const ix = (r.Interchanges as Rec[] | undefined)?.[0];
  const from = (ix?.TPFrom as Rec | undefined)?.GridID;
  const to = (ix?.TPTo as Rec | undefined)?.GridID;
  return {
    parcelId: journalId(operation, r.ParcelID),
    fileName: typeof r.FileName === 'string' ? r.FileName : null,
    ...(typeof r.ParcelBytes === 'number' ? { bytes: r.ParcelBytes } : {}),
    ...(typeof from === 'number' && from > 0 ? { gridIdFrom: from } : {}),
    ...(typeof to === 'number' && to > 0 ? { gridIdTo: to } : {}),
    ...(typeof r.ParcelDate === 'string' ? { created: r.ParcelDate } : {}),
    ...(typeof r.StatusCode === 'string' ? { status: r.StatusCode } : {}),
  };
}

const list = (collection: unknown): Rec[] =>
  ((collection as Rec | null)?.ParcelIDInfoList as Rec[] | undefined)?.filter((p): p is Rec => p !== null) ?? [];

export class SoapClient implements MailboxTransport {
  readonly url: URL;
  private readonly pool: Pool;
  private readonly maxAttempts: number;
  private readonly backoff: BackoffPolicy;
  private readonly now: () => number;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  private readonly random: () => number;
  private readonly userAgent = `gridsync/${gridsyncVersion()}`;
  private sessionId: string | undefined;
  private loggingIn: Promise<string> | undefined;
  private closed = false;

  constructor(private readonly options: SoapClientOptions) {
    const url = soapUrl(options.url);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new GridConfigError(`unsupported URL scheme ${url.protocol}`, 'soap');
    if (url.protocol === 'http:' && !LOOPBACK.has(url.hostname) && !options.allowInsecureHttp) {
      throw new GridConfigError(
        `refusing plain http:// to ${url.hostname}: credentials and EDI content would travel unencrypted; use https:// or set allowInsecureHttp`,
        'soap',
      );
    }
    const a = options.auth;
    if ('apiKey' in a ? !a.apiKey : !a.login || !a.password)
      throw new GridConfigError('no credentials: give an API key, or login and password', 'soap');
    this.url = url;
    this.maxAttempts = Math.max(1, options.maxAttempts ?? 3);
    this.backoff = { ...DEFAULT_BACKOFF, ...options.backoff };
    this.now = options.now ?? Date.now;
    this.sleep = options.sleep ?? ((ms, signal) => delay(ms, undefined, { signal }));
    this.random = options.random ?? Math.random;
    const t = options.timeouts ?? {};
    this.pool = new Pool(url.origin, {
      connections: options.connections ?? 8,
      keepAliveTimeout: 30_000,
      connect: { timeout: t.connectMs ?? 10_000 },
      headersTimeout: t.headersMs ?? 60_000,
      bodyTimeout: t.bodyMs ?? 60_000,
    });
  }

  /**
   * Calls any operation of the definition: parameters by element name (SessionID is filled in),
   * result decoded (records as objects keyed by element name, longs as decimal strings).
   */
  async call(name: string, params: Record<string, unknown> = {}, options: CallOptions = {}): Promise<unknown> {
    const def = op(name);
    // Every non-streamed operation ends within api.timeouts.callMs, however slowly the answer trickles.
    const callMs = this.options.timeouts?.callMs ?? DEFAULTS.api.timeouts.callMs;
    return this.run(def, IDEMPOTENT.test(def.name), options.signal, (sessionId) =>
      withCallDeadline(def.name, callMs, options.signal, async (signal) => {
        const res = await this.post(
          def,
          writeRequest(def, { ...params, ...(def.session ? { SessionID: sessionId } : {}) }),
          undefined,
          signal,
        );
        return this.result(def, await this.payload(def, res));
      }),
    );
  }

  // ------------------------------------------------------------------ MailboxTransport

  async sessionContext(options: CallOptions = {}): Promise<SessionContext> {
    const s = (await this.call('WhoAmI', {}, options)) as Rec;
    return {
      ...(typeof s.MailboxID === 'number' ? { mailboxId: s.MailboxID } : {}),
      ...(typeof s.UserID === 'number' ? { userId: s.UserID } : {}),
      ...(typeof s.LoginName === 'string' ? { login: s.LoginName } : {}),
    };
  }

  async pendingInbox(mailboxId: number, options: CallOptions = {}): Promise<PendingInbox> {
    const c = await this.call('ParcelInBoxEx', { NetworkID: 0, MailboxID: mailboxId, GridIDFrom: 0, GridIDTo: 0 }, options);
    const parcels: ParcelSummary[] = [];
    const unreadable: PendingInbox['unreadable'][number][] = [];
    const rows = list(c);
    for (const r of rows) {
      try {
        parcels.push(summary('ParcelInBoxEx', r));
      } catch (err) {
        // One record the journal cannot hold (an id above 2^53) is reported; the others still flow.
        if (!(err instanceof GridResponseError)) throw err;
        unreadable.push({
          error: err,
          ...(typeof r.FileName === 'string' ? { fileName: r.FileName } : {}),
          ...(r.ParcelID !== undefined ? { roughId: String(r.ParcelID) } : {}),
        });
      }
    }
    // The service may answer only part of the waiting parcels; TotalRecords says how many wait.
    const total = Number((c as Rec | null)?.TotalRecords ?? rows.length);
    return { parcels, unreadable, omitted: Math.max(0, total - rows.length) };
  }

  async parcel(parcelId: number, options: CallOptions = {}): Promise<ParcelSummary> {
    const r = (await this.call('ParcelInfo', { ParcelID: String(parcelId) }, options)) as Rec | null;
    if (!r) throw new GridResponseError('ParcelInfo', 200, 'ParcelInfoResult', 'missing');
    return summary('ParcelInfo', r);
  }

  /** `true`, or `false` for a parcel the service already shows as transferred (a repeated confirm). */
  async confirmParcel(parcelId: number, options: CallOptions = {}): Promise<void> {
    const ok = await this.call('ParcelDownloadConfirm', { ParcelID: String(parcelId) }, options);
    if (ok === true) return;
    const p = await this.parcel(parcelId, options);
    if (p.status !== 'InBoxTransferred')
      throw new GridResponseError(
        'ParcelDownloadConfirm',
        200,
        'ParcelDownloadConfirmResult',
        `false, and the parcel's status is ${p.status ?? 'unknown'}`,
      );
  }

  /** The description of a grid ID's record (`TPInfo`); another tenant's answers a NotFound fault and throws. */
  async partnerName(gridId: number, options: CallOptions = {}): Promise<string | undefined> {
    const r = (await this.call('TPInfo', { GridID: gridId }, options)) as Rec | null;
    if (!r || typeof r !== 'object') throw new GridResponseError('TPInfo', 200, 'TPInfoResult', 'missing');
    if (r.GridID !== undefined && Number(r.GridID) !== gridId)
      throw new GridResponseError('TPInfo', 200, 'TPInfoResult.GridID', `asked for ${gridId}, got ${String(r.GridID)}`);
    const description = typeof r.Description === 'string' ? r.Description.trim() : '';
    return description || undefined;
  }

  /** The three outbox lists over [since, now + 5 min]; duplicates across lists are dropped. */
  async *outboxParcels(query: OutboxQuery, options: CallOptions = {}): AsyncGenerator<ParcelSummary> {
    const since = Date.parse(query.since);
    const window = { BeginDate: query.since, EndDate: new Date(this.now() + RECONCILE_AHEAD_MS).toISOString() };
    const mailbox = { NetworkID: 0, MailboxID: query.mailboxId };
    const seen = new Set<number>();
    const emit = (rows: Rec[], operation: string): ParcelSummary[] =>
      rows
        .map((r) => summary(operation, r))
        .filter((p) => {
          if (seen.has(p.parcelId)) return false;
          seen.add(p.parcelId);
          return true;
        });
    // The in-process list takes no dates: filter by creation time here.
    const inProcess = list(await this.call('ParcelOutBoxInProcessEx', mailbox, options)).filter(
      (r) => typeof r.ParcelDate !== 'string' || Date.parse(r.ParcelDate) >= since,
    );
    yield* emit(inProcess, 'ParcelOutBoxInProcessEx');
    for (let page = 1; ; page++) {
      const c = (await this.call(
        'ParcelOutBoxArchiveEx',
        { ...mailbox, ...window, GridIDFrom: 0, GridIDTo: 0, MailbagControlID: '', PageNo: page, RecordsPerPage: OUTBOX_PAGE },
        options,
      )) as Rec | null;
      const rows = list(c);
      yield* emit(rows, 'ParcelOutBoxArchiveEx');
      if (rows.length === 0 || page * OUTBOX_PAGE >= Number(c?.TotalRecords ?? 0)) break;
    }
    yield* emit(list(await this.call('ParcelOutBoxErrorEx', { ...mailbox, ...window }, options)), 'ParcelOutBoxErrorEx');
  }

  /**
   * Downloads a parcel (`ParcelDownload`; `ContentBase64String` is read when `Content` is absent),
   * decoding while it arrives. Verifies base64, completeness, the declared and the listed size.
   * Retried only until the first content byte was written. The decode buffer is reused once the
   * writable's write callback has fired (a file stream is done with it by then).
   */
  async downloadParcel(parcelId: number, target: DownloadTarget | Writable, options: DownloadOptions = {}): Promise<DownloadResultInfo> {
    const def = op('ParcelDownload');
    const resettable = isDownloadTarget(target);
    let written = 0;
    return this.run(
      def,
      true,
      options.signal,
      async (sessionId) => {
        const res = await this.post(
          def,
          writeRequest(def, { SessionID: sessionId, ParcelID: String(parcelId) }),
          undefined,
          options.signal,
        );
        if (res.statusCode !== 200) {
          await this.payload(def, res);
          throw new GridResponseError(def.name, res.statusCode, '(status)', 'not a fault and not 200');
        }
        // A DownloadTarget gets a fresh destination per attempt (the client's download contract).
        if (resettable) written = 0;
        const writable = resettable ? await target.openAttempt() : target;
        try {
          return await this.receive(def, res, parcelId, writable, options, (n) => (written = n));
        } catch (err) {
          if (resettable) await target.discardAttempt();
          throw err;
        }
      },
      () => resettable || written === 0,
    );
  }

  private async receive(
    def: ReturnType<typeof op>,
    res: Awaited<ReturnType<SoapClient['post']>>,
    parcelId: number,
    writable: Writable,
    options: DownloadOptions,
    onWritten: (n: number) => void,
  ): Promise<DownloadResultInfo> {
    let written = 0;
    {
      const decoder = new Base64Decoder();
      const hash = createHash('sha256');
      const slab = Buffer.allocUnsafe(maxDecodedLength(SLAB_CHARS));
      let element: string | undefined;
      const onStream = async (text: string, name: string): Promise<void> => {
        element ??= name;
        if (name !== element) return; // both forms filled: the first one counts
        const clean = /\s/.test(text) ? text.replace(/\s+/g, '') : text;
        for (let i = 0; i < clean.length; i += SLAB_CHARS) {
          const buf = decoder.push(clean.slice(i, i + SLAB_CHARS), slab);
          if (buf.length === 0) continue;
          hash.update(buf);
          written += buf.length;
          onWritten(written);
          // The slab is reused: wait until the writable is done with it.
          await new Promise<void>((resolve, reject) => writable.write(buf, (err) => (err ? reject(err) : resolve())));
        }
      };
      let root: XmlNode;
      try {
        root = await readXml(res.body, { streamElements: CONTENT_OUT, onStream });
        decoder.end();
      } catch (err) {
        res.body.destroy();
        // The service answered 200 and the body broke off: a truncated answer, whether or not a content
        // byte was decoded yet (data buffered when the socket failed is discarded by the stream, so
        // "nothing written" does not mean "nothing sent"). Retried like any truncation.
        throw this.downloadFailure(def.name, parcelId, err);
      }
      const info = this.result(def, this.checkPayload(def, res.statusCode, root)) as Rec | null;
      if (!info) throw new GridResponseError(def.name, 200, 'ParcelDownloadResult', 'missing');
      const declared = typeof info.Bytes === 'number' ? info.Bytes : undefined;
      if (element === undefined && declared !== 0) throw new GridResponseError(def.name, 200, 'ParcelDownloadResult/Content', 'missing');
      for (const [what, n] of [
        ['declared', declared],
        ['listed', options.expectedBytes],
      ] as const) {
        if (n !== undefined && n !== decoder.bytes)
          throw new ContentIntegrityError(def.name, parcelId, 'byte-mismatch', `decoded ${decoder.bytes} bytes, ${what} ${n}`);
      }
      if (info.ParcelID !== undefined && String(info.ParcelID) !== String(parcelId)) {
        throw new GridResponseError(def.name, 200, 'ParcelDownloadResult/ParcelID', `asked for ${parcelId}, got ${String(info.ParcelID)}`);
      }
      return {
        parcelId,
        fileName: typeof info.FileName === 'string' ? info.FileName : null,
        bytes: decoder.bytes,
        ...(declared !== undefined ? { declaredBytes: declared } : {}),
        sha256: hash.digest('hex'),
      };
    }
  }

  /**
   * Uploads a file, base64-encoded into the envelope while it is sent (re-read per attempt):
   * `ParcelUploadMft` with explicit partners, `ParcelUploadEx` from a given mailbox, else
   * `ParcelUpload` (routed by the envelope). Never repeated once it may have reached the service.
   */
  async uploadParcel(filePath: string, upload: UploadOptions, options: UploadCallOptions = {}): Promise<{ parcelId: number }> {
    const def = op(
      upload.gridIdFrom !== undefined && upload.gridIdTo !== undefined
        ? 'ParcelUploadMft'
        : upload.mailboxId !== undefined
          ? 'ParcelUploadEx'
          : 'ParcelUpload',
    );
    return this.run(def, false, options.signal, async (sessionId) => {
      const source = await (options.calls ?? FileCalls.POOL).source(filePath);
      const size = source.size;
      const params = {
        SessionID: sessionId,
        NetworkID: 0,
        MailboxID: upload.mailboxId ?? 0,
        FileName: upload.fileName,
        Bytes: size,
        Content: STREAM_SLOT,
        GridIDFrom: upload.gridIdFrom ?? 0,
        GridIDTo: upload.gridIdTo ?? 0,
      };
      const [prefix, suffix] = writeRequest(def, params).split(STREAM_SLOT) as [string, string];
      const length = Buffer.byteLength(prefix) + base64Length(size) + Buffer.byteLength(suffix);
      const body = async function* (): AsyncGenerator<string> {
        yield prefix;
        yield* encodedContent(filePath, source);
        yield suffix;
        options.onBodySent?.();
      };
      const res = await this.post(def, body, length, options.signal);
      const id = this.result(def, await this.payload(def, res));
      if (typeof id !== 'number' || id <= 0)
        throw new GridResponseError(def.name, 200, `${def.name}Result`, `not a parcel id: ${String(id)}`);
      return { parcelId: id };
    });
  }

  /** Logs out a Login session (never an API key) and closes the connections. Safe to call twice. */
  async close(): Promise<void> {
    if (this.closed) return;
    const sessionId = this.sessionId;
    this.sessionId = undefined;
    if (sessionId) {
      try {
        const def = op('Logout');
        const res = await this.post(def, writeRequest(def, { SessionID: sessionId }), undefined);
        await res.body.dump();
      } catch (err) {
        this.options.logger?.debug({ operation: 'Logout', ...errorFields(err) }, 'logout failed while closing');
      }
    }
    this.closed = true;
    await this.pool.close();
  }

  // ------------------------------------------------------------------ internals

  /** The attempt loop: session id, one attempt, then the retry decision (one re-login on a session fault). */
  private async run<T>(
    def: OperationDef,
    idempotent: boolean,
    signal: AbortSignal | undefined,
    attempt: (sessionId: string | undefined) => Promise<T>,
    mayRetry: () => boolean = () => true,
  ): Promise<T> {
    if (this.closed) throw new GridConfigError('the client is closed', def.name);
    let reloggedIn = false;
    for (let n = 1; ; n++) {
      const started = this.now();
      let sessionId: string | undefined;
      try {
        sessionId = def.session ? await this.session() : undefined;
        return await attempt(sessionId);
      } catch (err) {
        if (signal?.aborted || (err as Error).name === 'AbortError') throw err;
        if (err instanceof SoapFaultError && err.sessionFault && 'login' in this.options.auth && def.session && !reloggedIn) {
          // The service refused before acting: a fresh session and one repeat are safe, even for an upload.
          reloggedIn = true;
          if (this.sessionId === sessionId) this.sessionId = undefined;
          n--;
          continue;
        }
        const decision = decideRetry(err, idempotent);
        if (decision === 'outcome-unknown') throw new UploadOutcomeUnknownError(def.name, started, err);
        if (!idempotent && err instanceof GridResponseError && err.httpStatus < 300)
          throw new UploadOutcomeUnknownError(def.name, started, err);
        if (decision === 'fail' || n >= this.maxAttempts || !mayRetry()) throw err;
        const wait = retryDelay(n, this.random(), this.backoff, err instanceof GridApiError ? err.retryAfterMs : undefined);
        this.options.logger?.warn(
          { operation: def.name, attempt: n, maxAttempts: this.maxAttempts, delayMs: wait, ...errorFields(err) },
          'SOAP call failed, retrying',
        );
        await this.sleep(wait, signal);
      }
    }
  }

  /** The SessionID to send: the API key, or the current Login session (one Login at a time). */
  private async session(): Promise<string> {
    const a = this.options.auth;
    if ('apiKey' in a) return a.apiKey;
    if (this.sessionId) return this.sessionId;
    this.loggingIn ??= (async () => {
      try {
        const id = await this.call('Login', { LoginName: a.login, Password: a.password });
        if (typeof id !== 'string' || id.trim() === '') throw new GridResponseError('Login', 200, 'LoginResult', 'no session id');
        this.sessionId = id.trim();
        return this.sessionId;
      } finally {
        this.loggingIn = undefined;
      }
    })();
    return this.loggingIn;
  }

  private async post(
    def: OperationDef,
    body: string | (() => AsyncIterable<string>),
    length: number | undefined,
    signal?: AbortSignal,
  ): Promise<Dispatcher.ResponseData> {
    const headers: Record<string, string> = {
      'user-agent': this.userAgent,
      'content-type': 'text/xml; charset=utf-8',
      soapaction: `"${def.action}"`,
      ...(length !== undefined ? { 'content-length': String(length) } : {}),
    };
    try {
      return await this.pool.request({
        path: this.url.pathname,
        method: 'POST',
        headers,
        body: typeof body === 'function' ? Readable.from(body(), { objectMode: false }) : body,
        signal,
      });
    } catch (err) {
      throw toTransportError(def.name, err);
    }
  }

  /** Reads a (small) response: the body element, or the typed error of a fault or a non-SOAP answer. */
  private async payload(def: OperationDef, res: Dispatcher.ResponseData): Promise<XmlNode> {
    const type = String(res.headers['content-type'] ?? '');
    const xml = /xml/i.test(type);
    if (res.statusCode !== 200 && !(res.statusCode === 500 && xml)) {
      // 429, 503, a proxy's page: the HTTP status decides, as over REST.
      const text = await readLimited(res.body, MAX_ERROR_BODY).catch(() => '');
      throw new GridApiError(
        def.name,
        res.statusCode,
        null,
        text.replace(/\s+/g, ' ').trim().slice(0, 200),
        parseRetryAfter(res.headers['retry-after'], this.now()),
      );
    }
    let root: XmlNode;
    try {
      root = await readXml(res.body);
    } catch (err) {
      res.body.destroy();
      if (err instanceof SoapXmlError) {
        if (res.statusCode !== 200) throw new GridApiError(def.name, res.statusCode, null, `unreadable fault: ${err.message}`);
        if (err.truncated) throw new GridTransportError(def.name, 'TRUNCATED', err.message, false);
        throw new GridResponseError(def.name, res.statusCode, err.path, err.message);
      }
      throw toTransportError(def.name, err);
    }
    return this.checkPayload(def, res.statusCode, root);
  }

  private checkPayload(def: OperationDef, status: number, root: XmlNode): XmlNode {
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

  private result(def: OperationDef, payload: XmlNode): unknown {
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

  private downloadFailure(operation: string, parcelId: number, err: unknown): Error {
    if (err instanceof InvalidBase64Error)
      return new ContentIntegrityError(operation, parcelId, 'invalid-base64', err.message, { cause: err });
    if (err instanceof SoapXmlError)
      return new ContentIntegrityError(operation, parcelId, err.truncated ? 'truncated' : 'malformed', err.message, { cause: err });
    const e = toTransportError(operation, err);
    if (e instanceof GridTransportError)
      return new ContentIntegrityError(operation, parcelId, 'truncated', `the body broke off: ${e.message}`, { cause: e });
    return e;
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
