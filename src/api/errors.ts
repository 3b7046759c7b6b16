/**
 * Errors of the client. Every one is a GridError with a stable `code` and the context an operator
 * needs (endpoint, parcelId, HTTP status, errorCode). Retry decisions look at codes and statuses,
 * never at message text.
 */
import { GridsyncError } from '../errors/index.js';
import type { ErrorCode } from '@gridsync/protocol/wire';

export abstract class GridError extends GridsyncError {
  constructor(
    message: string,
    /** Catalog name of the endpoint, e.g. `parcels.download`. */
    readonly endpoint: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The service answered with an error envelope or an error status. */
export class GridApiError extends GridError {
  readonly code = 'GRID_API_ERROR';
  constructor(
    endpoint: string,
    readonly httpStatus: number,
    /** The envelope's errorCode: one of the spec's codes, or an unknown code preserved as is. */
    readonly errorCode: ErrorCode | null,
    readonly serviceMessage: string,
    /** Seconds from a Retry-After header, when the service sent one. */
    readonly retryAfterMs?: number,
  ) {
    super(`${endpoint}: HTTP ${httpStatus}${errorCode ? ` ${errorCode}` : ''}${serviceMessage ? `: ${serviceMessage}` : ''}`, endpoint);
  }

  /**
   * 429, 500 and 503 are retried, and so are 502 and 504: a gateway in front of the service
   * answers them (often with an HTML page) while the service restarts. Everything else is permanent.
   */
  get retryable(): boolean {
    return [429, 500, 502, 503, 504].includes(this.httpStatus);
  }

  /**
   * A 404 that does not name a missing object: the service (or a proxy before it) has no such
   * endpoint. Not "unreachable", and not "the parcel is gone" either.
   */
  get noSuchEndpoint(): boolean {
    return this.httpStatus === 404 && this.errorCode !== 'ObjectNotFound';
  }
}

/** The request or the response failed on the network: refused, reset, timed out, truncated. */
export class GridTransportError extends GridError {
  readonly code = 'GRID_TRANSPORT_ERROR';
  constructor(
    endpoint: string,
    /** undici's `UND_ERR_*` or the system's `ECONNRESET`/`ECONNREFUSED`/… code. */
    readonly transportCode: string,
    message: string,
    /** True when the request provably never reached the service (connection refused, connect timeout). */
    readonly notSent: boolean,
    options?: { cause?: unknown },
  ) {
    super(`${endpoint}: ${transportCode}: ${message}`, endpoint, options);
  }
}

/** The body is not the envelope, or `data` does not match the endpoint's schema. */
export class GridResponseError extends GridError {
  readonly code = 'GRID_RESPONSE_ERROR';
  constructor(
    endpoint: string,
    readonly httpStatus: number,
    /** Dotted path of the offending field, e.g. `data[3].parcelId`; `(body)` for the whole body. */
    readonly field: string,
    detail: string,
  ) {
    super(`${endpoint}: unexpected response (HTTP ${httpStatus}) at ${field}: ${detail}`, endpoint);
  }
}

export type IntegrityReason = 'invalid-base64' | 'truncated' | 'byte-mismatch' | 'malformed';

/** A parcel's content failed verification: it must not be placed or confirmed. */
export class ContentIntegrityError extends GridError {
  readonly code = 'GRID_CONTENT_INTEGRITY';
  constructor(
    endpoint: string,
    readonly parcelId: number,
    readonly reason: IntegrityReason,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`${endpoint}: parcel ${parcelId}: ${reason}: ${detail}`, endpoint, options);
  }
}

/**
 * A non-idempotent request (an upload) may have reached the service but no answer came back. The
 * caller must reconcile (look for the parcel in the outbox list) before sending again.
 */
export class UploadOutcomeUnknownError extends GridError {
  readonly code = 'GRID_UPLOAD_OUTCOME_UNKNOWN';
  constructor(
    endpoint: string,
    /** Epoch ms when the attempt started: the lower bound of the reconciliation window. */
    readonly attemptStartedAt: number,
    cause: unknown,
  ) {
    super(`${endpoint}: the outcome of the request is unknown (${cause instanceof Error ? cause.message : String(cause)})`, endpoint, {
      cause,
    });
  }
}

/**
 * The service's answer went past a limit gridsync sets to protect itself: a body larger than
 * `api.limits.maxBodyBytes`, a call past its deadline, a transfer slower than the minimum rate,
 * a download longer than declared. Not retried within the call when the answer was too large.
 */
export class GridLimitError extends GridError {
  readonly code = 'GRID_LIMIT_EXCEEDED';
  constructor(
    endpoint: string,
    /** The config key of the limit. */
    readonly limitKey: string,
    readonly limit: number,
    detail: string,
  ) {
    super(`${endpoint}: ${detail} (limit ${limitKey} = ${limit})`, endpoint);
  }
}

/**
 * A download's content outgrew the room its destination has (the caller's free space less its
 * margin, `DownloadOptions.roomBytes`): stopped before the first byte past it. A local condition,
 * not the parcel's fault — whatever size the service declared, this is what it actually sent.
 */
export class DownloadRoomError extends GridError {
  readonly code = 'GRID_DOWNLOAD_NO_ROOM';
  constructor(
    endpoint: string,
    readonly parcelId: number,
    readonly roomBytes: number,
  ) {
    super(
      `${endpoint}: parcel ${parcelId}: the content runs past the ${roomBytes} bytes its destination has room for; stopped before writing more`,
      endpoint,
    );
  }
}

/**
 * The service answered a confirm, but not with a confirm of this parcel: a success answer naming
 * another parcel, a status that is not "confirmed", a SOAP `false` whose read-back does not show
 * the parcel archived. The parcel is not confirmed; the confirm is safe to repeat (transient).
 */
export class ConfirmNotTakenError extends GridError {
  readonly code = 'GRID_CONFIRM_NOT_TAKEN';
  constructor(
    endpoint: string,
    readonly parcelId: number,
    detail: string,
  ) {
    super(`${endpoint}: parcel ${parcelId} is not confirmed: ${detail}`, endpoint);
  }
}

/**
 * A file to upload is not the size it was claimed with: what would be sent is not the file that
 * was claimed. `notSent`: found before any byte of it went out (else it changed during the upload).
 */
export class UploadSourceChangedError extends GridsyncError {
  readonly code = 'GRID_UPLOAD_SOURCE_CHANGED';
  constructor(
    readonly filePath: string,
    readonly detail: string,
    readonly notSent = false,
  ) {
    super(`${filePath} ${detail}`);
  }
}

/** The client was configured in a way it refuses (plain http to a remote host, no credentials). */
export class GridConfigError extends GridError {
  readonly code = 'GRID_CONFIG_ERROR';
}

/** Permanent: retrying the same request cannot succeed (4xx, schema mismatches, bad content). */
export function isPermanent(err: unknown): boolean {
  if (err instanceof GridApiError) return !err.retryable;
  return err instanceof GridResponseError || err instanceof GridConfigError;
}

/** Transient: a later attempt may succeed (429/500/503, network, unknown upload outcome, integrity). */
export function isTransient(err: unknown): boolean {
  return err instanceof GridError && !isPermanent(err);
}
