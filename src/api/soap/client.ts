/**
 * The client of the SOAP 4.1 interface: any operation of the definition by name, and the
 * MailboxTransport the pipelines use, so the daemon runs over SOAP exactly as over REST. It only
 * encodes envelopes and decodes answers: connections, the attempt loop, the rate-limit pause, the
 * limits, the deadlines and the redaction of failures are the client core's (../core.ts), shared
 * with REST.
 *
 * - Credentials: session.ts (the API key preferred; one Login session shared, logged out on close).
 * - Retries as over REST, mapped onto SOAP: HTTP 429/503 and network failures as they are; a fault
 *   is decided on its code (`soap:Server` may pass later, `soap:Client` never does), not on its
 *   HTTP 500. An upload that may have reached the service is never repeated: its outcome is unknown
 *   and the caller reconciles through the outbox lists.
 * - Content is streamed both ways: the request envelope is written around a base64 encoder fed
 *   from the file, the response is parsed by saxes with the content element decoded straight into
 *   the destination (download.ts). Memory does not grow with the parcel.
 */
import type { Writable } from 'node:stream';
import { ClientCore, type CoreOptions } from '../core.js';
import { ConfirmNotTakenError, GridConfigError, GridLimitError, GridResponseError } from '../errors.js';
import type { RequestBody } from '../http.js';
import type { RetryOptions } from '../retry-loop.js';
import type { GridAuth } from '../session.js';
import { CONFIRMED_STATUS, statedMailbox } from '../tolerant.js';
import {
  isDownloadTarget,
  openAttemptFor,
  type CallOptions,
  type PendingOptions,
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
import { streamedBody, uploadSource } from '../transfer.js';
import { base64Length } from '@gridsync/protocol/encoding';
import { FileCalls } from '../../files/index.js';
import { decodeResult, omittedRecords, readAnswer } from './answer.js';
import { receiveParcel } from './download.js';
import { journalId, list, summary, type Rec } from './records.js';
import { SOAP_PATH, operationByName, type OperationDef, STREAM_SLOT, writeRequest, type XmlNode } from '@gridsync/protocol/soap';
import { SoapSession } from './session.js';
import { listLimits } from '../list-allowance.js';
import { PageGuard } from '../page-guard.js';

export type { ClientLogger as SoapClientLogger } from '../core.js';

export interface SoapClientOptions extends CoreOptions {
  /** The service address: the `…/GridOS.asmx` URL, or a root to which `/v4.1/prod/GridOS.asmx` is added. */
  readonly url: string;
  readonly auth: GridAuth;
}

/** Reconciliation looks this far past now, for a service clock that runs ahead. */
const RECONCILE_AHEAD_MS = 5 * 60_000;
const OUTBOX_PAGE = 500;
const CALL = { call: true } as const;

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

export class SoapClient implements MailboxTransport {
  readonly url: URL;
  private readonly core: ClientCore<string>;
  private readonly session: SoapSession;

  constructor(options: SoapClientOptions) {
    this.url = soapUrl(options.url);
    let session: SoapSession | undefined;
    this.core = new ClientCore(new URL(this.url.origin), options, () => {
      session = new SoapSession(options.auth, (LoginName, Password) =>
        this.call('Login', { LoginName, Password }, { signal: this.core.closingSignal }),
      );
      return session;
    });
    this.session = session as unknown as SoapSession;
  }

  /** Pauses of every request after a 429, so far. */
  get rateLimitPauses(): number {
    return this.core.rateLimitPauses;
  }

  overloadAnswers(): number {
    return this.core.overloadAnswers;
  }

  /**
   * Calls any operation of the definition: parameters by element name (SessionID is filled in),
   * result decoded (records as objects keyed by element name, longs as decimal strings).
   */
  async call(name: string, params: Record<string, unknown> = {}, options: CallOptions = {}): Promise<unknown> {
    const def = op(name);
    return decodeResult(def, await this.invoke(def, params, options));
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

  async pendingInbox(mailboxId: number, options: PendingOptions = {}): Promise<PendingInbox> {
    const def = op('ParcelInBoxEx');
    const params = { NetworkID: 0, MailboxID: mailboxId, GridIDFrom: 0, GridIDTo: 0 };
    const payload = await this.invoke(def, params, options, listLimits(this.core.limits, options.givenUp));
    const c = decodeResult(def, payload);
    const parcels: ParcelSummary[] = [];
    const unreadable: PendingInbox['unreadable'][number][] = [];
    const rows = list(c);
    for (const r of rows) {
      try {
        parcels.push(summary(def.name, r, { field: 'MailboxIDTo', mailboxId }));
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
    // Records past api.limits.maxListEntries were counted, not kept; TotalRecords may say more wait.
    const held = rows.length + omittedRecords(def, payload);
    const total = Math.max(held, Number((c as Rec | null)?.TotalRecords ?? 0) || 0);
    return { parcels, unreadable, omitted: total - rows.length };
  }

  async parcel(parcelId: number, options: CallOptions = {}): Promise<ParcelSummary> {
    const r = (await this.call('ParcelInfo', { ParcelID: String(parcelId) }, options)) as Rec | null;
    if (!r) throw new GridResponseError('ParcelInfo', 200, 'ParcelInfoResult', 'missing');
    const p = summary('ParcelInfo', r);
    if (p.parcelId !== parcelId)
      throw new GridResponseError('ParcelInfo', 200, 'ParcelInfoResult/ParcelID', `asked for ${parcelId}, got ${p.parcelId}`);
    const inbox = statedMailbox(r.MailboxIDTo);
    return inbox === undefined ? p : { ...p, inboxMailboxId: inbox };
  }

  /**
   * `true` confirms. `false` ("already confirmed by another session", or not at all) is decided on
   * the parcel's status: only `InBoxArchived` shows a confirm (`InBoxTransferred` is what a
   * download leaves); otherwise the parcel is not confirmed (ConfirmNotTakenError).
   */
  async confirmParcel(parcelId: number, options: CallOptions = {}): Promise<void> {
    const ok = await this.call('ParcelDownloadConfirm', { ParcelID: String(parcelId) }, options);
    if (ok === true) return;
    const p = await this.parcel(parcelId, options);
    if (p.status !== CONFIRMED_STATUS)
      throw new ConfirmNotTakenError(
        'ParcelDownloadConfirm',
        parcelId,
        `the service answered false and shows it ${p.status ?? 'without a status'}`,
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

  /** The three outbox lists over [since, the later of our clock and the service's + 5 min]; duplicates across lists are dropped. */
  async *outboxParcels(query: OutboxQuery, options: CallOptions = {}): AsyncGenerator<ParcelSummary> {
    const since = Date.parse(query.since);
    // Up to the later of our clock and the service's: ending at ours cut off a parcel stamped by a service ahead of us.
    const latest = this.core.now() + Math.max(0, this.core.http.clock.offsetMs() ?? 0);
    const window = { BeginDate: query.since, EndDate: new Date(latest + RECONCILE_AHEAD_MS).toISOString() };
    const mailbox = { NetworkID: 0, MailboxID: query.mailboxId };
    const seen = new Set<number>();
    const emit = (rows: Rec[], operation: string): ParcelSummary[] =>
      rows
        .map((r) => summary(operation, r, { field: 'MailboxIDFrom', mailboxId: query.mailboxId }))
        .filter((p) => {
          if (seen.has(p.parcelId)) return false;
          seen.add(p.parcelId);
          return true;
        });
    // The in-process list takes no dates: filter by creation time here.
    const inProcess = list(await this.complete('ParcelOutBoxInProcessEx', mailbox, options)).filter(
      (r) => typeof r.ParcelDate !== 'string' || Date.parse(r.ParcelDate) >= since,
    );
    yield* emit(inProcess, 'ParcelOutBoxInProcessEx');
    const guard = new PageGuard('ParcelOutBoxArchiveEx');
    for (let page = 1; ; page++) {
      const c = (await this.complete(
        'ParcelOutBoxArchiveEx',
        { ...mailbox, ...window, GridIDFrom: 0, GridIDTo: 0, MailbagControlID: '', PageNo: page, RecordsPerPage: OUTBOX_PAGE },
        options,
      )) as Rec | null;
      const rows = list(c);
      guard.page(rows.map((r) => journalId('ParcelOutBoxArchiveEx', r.ParcelID)));
      yield* emit(rows, 'ParcelOutBoxArchiveEx');
      if (rows.length === 0 || page * OUTBOX_PAGE >= Number(c?.TotalRecords ?? 0)) break;
    }
    yield* emit(list(await this.complete('ParcelOutBoxErrorEx', { ...mailbox, ...window }, options)), 'ParcelOutBoxErrorEx');
  }

  /**
   * Downloads a parcel (download.ts), under the minimum transfer rate. With a DownloadTarget every
   * failed attempt is discarded and the next starts in a fresh destination; a plain Writable is
   * retried only until its first byte.
   */
  async downloadParcel(parcelId: number, target: DownloadTarget | Writable, options: DownloadOptions = {}): Promise<DownloadResultInfo> {
    const def = op('ParcelDownload');
    const resettable = isDownloadTarget(target);
    let written = 0;
    const retry: RetryOptions = { ...this.retryOptions(def, options), mayRetry: () => resettable || written === 0 };
    return this.core.run(retry, { transfer: () => written, onProgress: options.onProgress }, async (sessionId, { signal }) => {
      written = 0;
      const res = await this.post(def, writeRequest(def, { SessionID: sessionId, ParcelID: String(parcelId) }), signal);
      if (res.statusCode !== 200) return readAnswer(def, res, this.core.limits, this.core.now()) as never;
      const writable = await openAttemptFor(target, res.body);
      try {
        return await receiveParcel(def, res, writable, {
          parcelId,
          expectedBytes: options.expectedBytes,
          roomBytes: options.roomBytes,
          limits: this.core.limits,
          onWritten: (n) => (written = n),
        });
      } catch (err) {
        if (resettable) await target.discardAttempt();
        throw err;
      }
    });
  }

  /**
   * Uploads a file, base64-encoded into the envelope while it is sent (re-read per attempt):
   * `ParcelUploadMft` with explicit partners, `ParcelUploadEx` from a given mailbox, else
   * `ParcelUpload` (routed by the envelope). Never repeated once it may have reached the service;
   * the answer, once the body is out, gets `api.timeouts.callMs`.
   */
  async uploadParcel(filePath: string, upload: UploadOptions, options: UploadCallOptions = {}): Promise<{ parcelId: number }> {
    const def = op(
      upload.gridIdFrom !== undefined && upload.gridIdTo !== undefined
        ? 'ParcelUploadMft'
        : upload.mailboxId !== undefined
          ? 'ParcelUploadEx'
          : 'ParcelUpload',
    );
    return this.core.upload(this.retryOptions(def, options, false), options.onBodySent, async (sessionId, signal, progress) => {
      const source = await uploadSource(filePath, upload, options.calls ?? FileCalls.POOL);
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
      const res = await this.post(def, streamedBody(filePath, source, { head: prefix, tail: suffix }, progress), signal, length);
      const id = decodeResult(def, await readAnswer(def, res, this.core.limits, this.core.now()));
      if (typeof id !== 'number' || id <= 0)
        throw new GridResponseError(def.name, 200, `${def.name}Result`, `not a parcel id: ${String(id)}`);
      return { parcelId: id };
    });
  }

  serviceClockOffsetMs(): number | undefined {
    return this.core.http.clock.offsetMs();
  }

  /** Logs out a Login session (never an API key) and closes the connections. Safe to call twice. */
  close(): Promise<void> {
    return this.core.close(
      () => this.session.takeForLogout(),
      async (sessionId, signal) => {
        const def = op('Logout');
        const res = await this.post(def, writeRequest(def, { SessionID: sessionId }), signal);
        await res.body.dump();
      },
      { operation: 'Logout' },
    );
  }

  // ------------------------------------------------------------------ internals

  /** One non-streamed operation through the core: the answer's body element. */
  private invoke(def: OperationDef, params: Record<string, unknown>, options: CallOptions, limits = this.core.limits): Promise<XmlNode> {
    return this.core.run(this.retryOptions(def, options), CALL, async (sessionId, { signal }) => {
      const res = await this.post(def, writeRequest(def, { ...params, ...(def.session ? { SessionID: sessionId } : {}) }), signal);
      return readAnswer(def, res, limits, this.core.now());
    });
  }

  /** A list the caller must see whole (reconciliation): records past the list limit fail the call. */
  private async complete(name: string, params: Record<string, unknown>, options: CallOptions): Promise<unknown> {
    const def = op(name);
    const payload = await this.invoke(def, params, options);
    const omitted = omittedRecords(def, payload);
    if (omitted > 0)
      throw new GridLimitError(
        def.name,
        'api.limits.maxListEntries',
        this.core.limits.maxListEntries,
        `${omitted} more records than the limit`,
      );
    return decodeResult(def, payload);
  }

  private retryOptions(def: OperationDef, options: CallOptions, idempotent = IDEMPOTENT.test(def.name)): RetryOptions {
    return { endpoint: def.name, idempotent, auth: def.session, signal: options.signal, mailbox: options.mailbox };
  }

  private post(def: OperationDef, body: RequestBody, signal: AbortSignal | undefined, length?: number) {
    const headers: Record<string, string> = {
      accept: 'text/xml',
      'content-type': 'text/xml; charset=utf-8',
      soapaction: `"${def.action}"`,
      ...(length !== undefined ? { 'content-length': String(length) } : {}),
    };
    return this.core.http.send(def.name, 'POST', this.url.pathname, headers, body, signal);
  }
}
