/**
 * The client core both protocols stand on: the connections (http.ts), the attempt loop with its
 * rate gate (retry-loop.ts, rate-gate.ts), the limits on what the service may send
 * (`api.limits.*`), the time limits of an attempt (attempt-limits.ts) and the redaction of
 * failures. REST (client.ts) and SOAP (soap/client.ts) only encode requests and decode answers
 * over it, so a limit or a deadline added here holds for both.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { DEFAULTS } from '../config/defaults.js';
import { withAttemptLimits, type AttemptControl } from './attempt-limits.js';
import { recordAttemptOn } from './attempt-record.js';
import { HttpChannel, type HttpTimeouts } from './http.js';
import { ContentIntegrityError, DownloadRoomError } from './errors.js';
import { errorFields } from '../errors/index.js';
import { RateGate } from './rate-gate.js';
import { DEFAULT_BACKOFF, type BackoffPolicy } from './retry.js';
import { RetryLoop, type Credentials, type RetryNotice, type RetryOptions } from './retry-loop.js';

export interface ClientLogger {
  warn(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

export interface ClientLimits {
  readonly maxBodyBytes: number;
  readonly maxListEntries: number;
  readonly minBytesPerSecond: number;
  readonly rateWindowMs: number;
  readonly maxParcelBytes: number;
}

/** What every client is configured with, whatever its protocol (the `api` section of the config). */
export interface CoreOptions {
  /** Attempts per call, the first included. Default 3. */
  readonly maxAttempts?: number;
  readonly timeouts?: HttpTimeouts;
  /** Keep-alive connections to the service (DEFAULTS.api.connections). */
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
  /** Called for every retry of an attempt (for a metric). */
  readonly onRetry?: (retry: RetryNotice) => void;
}

const realSleep = (ms: number, signal?: AbortSignal): Promise<void> => delay(ms, undefined, signal ? { signal } : {});

/**
 * How one attempt is bounded in time: a call (deadline from the start), a download (minimum rate
 * on the bytes `transfer` counts; `onProgress` hears the count at the end of each rate window in
 * which it grew) or an upload (minimum rate on the body's bytes that `upload` counts as they are
 * handed to the connection, then a deadline for the answer once the body is out).
 */
export type AttemptKind =
  | { readonly call: true }
  | { readonly transfer: () => number; readonly onProgress?: ((bytes: number) => void) | undefined }
  | { readonly upload: () => number };

/** What an upload's body tells as it goes out (transfer.ts `streamedBody`): what is handed to the connection, and its end. */
export interface BodyProgress {
  /** Characters of the body handed to the connection so far in this attempt. */
  readonly handed: (count: number) => void;
  /** The last piece is handed over. */
  readonly sent: () => void;
}

export class ClientCore<C> {
  readonly http: HttpChannel;
  readonly limits: ClientLimits;
  readonly callMs: number;
  readonly now: () => number;
  readonly logger: ClientLogger | undefined;
  private readonly gate: RateGate;
  private readonly loop: RetryLoop<C>;
  private closed = false;
  private overloads = 0;
  /** Aborted by close(): a login that callers shared is no single caller's to stop, and would hold the pool's close. */
  private readonly closing = new AbortController();

  constructor(origin: URL, options: CoreOptions, credentials: (core: ClientCore<C>) => Credentials<C>) {
    this.http = new HttpChannel(origin, {
      ...(options.connections !== undefined ? { connections: options.connections } : {}),
      ...(options.timeouts ? { timeouts: options.timeouts } : {}),
      ...(options.allowInsecureHttp !== undefined ? { allowInsecureHttp: options.allowInsecureHttp } : {}),
    });
    this.now = options.now ?? Date.now;
    this.logger = options.logger;
    this.limits = { ...DEFAULTS.api.limits, ...options.limits };
    this.callMs = options.timeouts?.callMs ?? DEFAULTS.api.timeouts.callMs;
    const sleep = options.sleep ?? realSleep;
    this.gate = new RateGate(this.now, sleep, options.onRateLimitPause);
    this.loop = new RetryLoop({
      credentials: credentials(this),
      gate: this.gate,
      maxAttempts: Math.max(1, options.maxAttempts ?? 3),
      backoff: { ...DEFAULT_BACKOFF, ...options.backoff },
      now: this.now,
      sleep,
      random: options.random ?? Math.random,
      logger: this.logger,
      isClosed: () => this.closed,
      onOverload: () => this.overloads++,
      ...(options.onRetry ? { onRetry: options.onRetry } : {}),
    });
  }

  /** Pauses of every request after a 429, so far. */
  get rateLimitPauses(): number {
    return this.gate.pauses;
  }

  /** The signal of requests made for every caller (the session's login): aborted when the client closes. */
  get closingSignal(): AbortSignal {
    return this.closing.signal;
  }

  /** 429 and 503 answers to any attempt, so far. */
  get overloadAnswers(): number {
    return this.overloads;
  }

  /**
   * Runs a call through the attempt loop, each attempt under its time limits: a `call` ends within
   * `api.timeouts.callMs`; a `transfer` keeps the minimum rate (`progress` counts its bytes); an
   * `upload` keeps the minimum rate while its body goes out, then gets `callMs` for its answer
   * once `armDeadline` says the body is out. The minimum rate starts when the transfer begins
   * (`transferBegins`), not with the attempt.
   */
  run<T>(
    options: RetryOptions,
    kind: AttemptKind,
    attempt: (credential: C | undefined, control: AttemptControl) => Promise<T>,
  ): Promise<T> {
    const rate = (progress: () => number) => ({
      bytesPerSecond: this.limits.minBytesPerSecond,
      windowMs: this.limits.rateWindowMs,
      progress,
    });
    return this.loop.run(options, (credential, record) =>
      withAttemptLimits(
        options.endpoint,
        options.signal,
        'transfer' in kind
          ? { minRate: rate(kind.transfer), ...(kind.onProgress ? { moved: kind.onProgress } : {}) }
          : 'upload' in kind
            ? { minRate: rate(kind.upload), deadlineMs: this.callMs, deadlineArmed: true }
            : { deadlineMs: this.callMs },
        (control) => {
          recordAttemptOn(control.signal, record);
          return attempt(credential, control);
        },
      ),
    );
  }

  /**
   * An upload through `run`, for both protocols: `attempt` streams its body through `progress`,
   * which counts it for the minimum rate and, once the body is out, starts the answer's deadline
   * and tells `onBodySent`.
   */
  upload<T>(
    options: RetryOptions,
    onBodySent: (() => void) | undefined,
    attempt: (credential: C | undefined, signal: AbortSignal, progress: BodyProgress) => Promise<T>,
  ): Promise<T> {
    let handed = 0;
    return this.run(options, { upload: () => handed }, (credential, { signal, armDeadline }) => {
      handed = 0;
      const progress: BodyProgress = {
        handed: (count) => (handed = count),
        sent: () => {
          armDeadline();
          onBodySent?.();
        },
      };
      return attempt(credential, signal, progress);
    });
  }

  /**
   * Closes once, for both protocols: refuses new calls, ends the session the client holds (`take`
   * hands it over; an API key gives none) with `logout`, then closes the connections. A failed
   * logout is logged at debug and does not stop the close. Safe to call twice.
   */
  async close(
    take: () => string | undefined,
    logout: (credential: string, signal: AbortSignal) => Promise<void>,
    fields: Record<string, string>,
  ): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.closing.abort();
    const credential = take();
    if (credential) {
      try {
        // The logout is no attempt of the loop, so nothing else bounds it: a service that held or
        // trickled its answer kept every command that had logged in (once, redeliver) from exiting.
        await logout(credential, AbortSignal.timeout(this.callMs));
      } catch (err) {
        this.logger?.debug({ ...fields, ...errorFields(err) }, 'logout failed while closing');
      }
    }
    await this.http.close();
  }
}

/**
 * The most content bytes a download may write: the least of the listed size, the size the answer
 * declared before its content, and `api.limits.maxParcelBytes` — a declared size alone is never
 * trusted, and the first byte past the cap stops the attempt.
 */
export function contentCap(maxParcelBytes: number, ...declared: (number | undefined)[]): number {
  return Math.min(maxParcelBytes, ...declared.filter((n): n is number => n !== undefined && n >= 0));
}

/** What one download may write: `cap` (contentCap) and the destination's room (DownloadOptions.roomBytes). */
export interface ContentBounds {
  readonly cap: number;
  readonly roomBytes?: number | undefined;
}

/**
 * Checked before each decoded chunk is written, by REST and SOAP alike: content past the cap is
 * the answer's fault (byte-mismatch), content past the room a local condition (DownloadRoomError).
 */
export function admitContent(endpoint: string, parcelId: number, written: number, chunk: number, bounds: ContentBounds): void {
  const total = written + chunk;
  if (total > bounds.cap)
    throw new ContentIntegrityError(
      endpoint,
      parcelId,
      'byte-mismatch',
      `the content runs past ${bounds.cap} bytes; stopped before writing more`,
    );
  if (bounds.roomBytes !== undefined && total > bounds.roomBytes) throw new DownloadRoomError(endpoint, parcelId, bounds.roomBytes);
}
