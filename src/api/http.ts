/**
 * The HTTP channel of the REST client: one undici pool per service origin, the base-URL safety
 * rules, and the mapping of network failures to GridTransportError. Knows nothing of envelopes,
 * sessions or retries.
 */
import { Readable } from 'node:stream';
import { Pool, type Dispatcher } from 'undici';
import { gridsyncVersion } from '../version.js';
import { GridConfigError, GridError, GridTransportError } from './errors.js';
import { provablyNotSent } from './retry.js';
import { ServiceClock } from './service-clock.js';

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

const LOOPBACK = new Set(['localhost', '127.0.0.1', '::1', '[::1]']);

export class HttpChannel {
  private readonly pool: Pool;
  private readonly prefix: string;
  private readonly userAgent = `gridsync/${gridsyncVersion()}`;
  /** The service's clock, from the `Date` of every answer. */
  readonly clock = new ServiceClock();

  constructor(baseUrl: string, options: { connections?: number; timeouts?: HttpTimeouts; allowInsecureHttp?: boolean }) {
    const url = new URL(baseUrl);
    if (url.protocol !== 'https:' && url.protocol !== 'http:')
      throw new GridConfigError(`unsupported base URL scheme ${url.protocol}`, 'client');
    if (url.protocol === 'http:' && !LOOPBACK.has(url.hostname) && !options.allowInsecureHttp) {
      throw new GridConfigError(
        `refusing plain http:// to ${url.hostname}: credentials and EDI content would travel unencrypted; use https:// or set allowInsecureHttp`,
        'client',
      );
    }
    this.prefix = url.pathname.replace(/\/+$/, '');
    const t = options.timeouts ?? {};
    // TLS verification stays at undici's default (on); there is deliberately no option to turn it off.
    this.pool = new Pool(url.origin, {
      connections: options.connections ?? 8,
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
      this.clock.note(res.headers.date);
      return res;
    } catch (err) {
      throw toTransportError(endpointName, err);
    }
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

/** A network failure as a GridTransportError; typed errors and aborts pass through unchanged. */
export function toTransportError(endpointName: string, err: unknown): Error {
  if (err instanceof GridError || (err as Error).name === 'AbortError') return err as Error;
  const code = (err as { code?: string }).code ?? 'UNKNOWN';
  return new GridTransportError(endpointName, code, (err as Error).message, provablyNotSent(code), { cause: err });
}

/**
 * Runs one attempt of a non-streamed call under an overall deadline (`api.timeouts.callMs`): an
 * answer that trickles in a byte at a time never trips the idle timeout, but it trips this.
 * Shared by the REST and the SOAP client.
 */
export async function withCallDeadline<T>(
  endpoint: string,
  callMs: number,
  outer: AbortSignal | undefined,
  fn: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), callMs);
  const onAbort = (): void => ctl.abort();
  outer?.addEventListener('abort', onAbort, { once: true });
  try {
    return await fn(ctl.signal);
  } catch (err) {
    if (ctl.signal.aborted && !outer?.aborted) {
      throw new GridTransportError(
        endpoint,
        'GRIDSYNC_CALL_DEADLINE',
        `no complete answer within ${callMs} ms (api.timeouts.callMs)`,
        false,
        {
          cause: err,
        },
      );
    }
    throw err;
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener('abort', onAbort);
  }
}
