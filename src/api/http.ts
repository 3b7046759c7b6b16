/**
 * The HTTP channel of both clients (REST and SOAP): one undici pool per service origin, the
 * base-URL safety rule (url-policy.ts), and the mapping of network failures to GridTransportError.
 * Knows nothing of envelopes, sessions or retries.
 */
import { Readable } from 'node:stream';
import { Pool, type Dispatcher } from 'undici';
import { DEFAULTS } from '../config/defaults.js';
import { gridsyncVersion } from '../version.js';
import { GridConfigError, GridError, GridTransportError } from './errors.js';
import { provablyNotSent } from './retry.js';
import { serviceUrlProblem } from './url-policy.js';
import { ServiceClock } from './service-clock.js';
import { noteRequest } from './attempt-record.js';
import { transferBegins } from './attempt-limits.js';

export interface RawResponse {
  readonly statusCode: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Dispatcher.ResponseData['body'];
}

export type RequestBody = string | (() => AsyncIterable<string | Uint8Array>) | undefined;

export interface HttpTimeouts {
  readonly connectMs?: number;
  readonly headersMs?: number;
  readonly bodyMs?: number;
  /** A whole non-streamed call, answer included. */
  readonly callMs?: number;
}

export class HttpChannel {
  private readonly pool: Pool;
  private readonly prefix: string;
  private readonly userAgent = `gridsync/${gridsyncVersion()}`;
  /** The service's clock, from the `Date` of every answer. */
  readonly clock = new ServiceClock();

  constructor(baseUrl: string | URL, options: { connections?: number; timeouts?: HttpTimeouts; allowInsecureHttp?: boolean }) {
    const url = typeof baseUrl === 'string' ? new URL(baseUrl) : baseUrl;
    const problem = serviceUrlProblem(url, options.allowInsecureHttp ?? false);
    if (problem) throw new GridConfigError(problem, 'client');
    this.prefix = url.pathname.replace(/\/+$/, '');
    const t = options.timeouts ?? {};
    // TLS verification stays at undici's default (on); there is deliberately no option to turn it off.
    this.pool = new Pool(url.origin, {
      connections: options.connections ?? DEFAULTS.api.connections,
      keepAliveTimeout: 30_000,
      connect: { timeout: t.connectMs ?? 10_000 },
      headersTimeout: t.headersMs ?? 60_000,
      bodyTimeout: t.bodyMs ?? 60_000,
    });
  }

  async send(
    endpointName: string,
    method: string,
    path: string,
    headers: Record<string, string>,
    body: RequestBody,
    signal?: AbortSignal,
  ): Promise<RawResponse> {
    // JSON unless the caller says otherwise (the SOAP encoder sends its own accept and content-type).
    const h: Record<string, string> = {
      'user-agent': this.userAgent,
      accept: 'application/json',
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    };
    noteRequest(signal, method);
    const streamed = typeof body === 'function';
    try {
      const res = await this.pool.request({
        path: this.prefix + path,
        method: method as Dispatcher.HttpMethod,
        headers: h,
        body: streamed ? Readable.from(beginning(body(), signal), { objectMode: false }) : body,
        // undici's timer for the answer's headers starts when the request is handed over, body and
        // all: a streamed body (an upload) slower than headersMs was cut while every byte moved.
        // The caller's attempt limits time it instead (a minimum rate, then callMs for the answer).
        ...(streamed ? { headersTimeout: 0 } : {}),
        signal,
      });
      transferBegins(signal);
      this.clock.note(res.headers.date);
      noteRequest(signal, method, res.statusCode);
      return res;
    } catch (err) {
      throw toTransportError(endpointName, err);
    }
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

/** A streamed body that tells its attempt the transfer begins when the connection first reads it (after any wait for one). */
async function* beginning<T>(pieces: AsyncIterable<T>, signal: AbortSignal | undefined): AsyncGenerator<T> {
  transferBegins(signal);
  yield* pieces;
}

/** A network failure as a GridTransportError; typed errors and aborts pass through unchanged. */
export function toTransportError(endpointName: string, err: unknown): Error {
  if (err instanceof GridError || (err as Error).name === 'AbortError') return err as Error;
  const code = (err as { code?: string }).code ?? 'UNKNOWN';
  return new GridTransportError(endpointName, code, (err as Error).message, provablyNotSent(code), { cause: err });
}
