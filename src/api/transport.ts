/**
 * What the pipelines need from the service, and nothing more: the small interface a transport
 * (REST v2 today, SOAP next) implements. Records carry only the fields gridsync acts on; each
 * transport decodes its own wire shapes into them.
 */
import type { Writable } from 'node:stream';
import type { DownloadResultInfo, UploadOptions } from './transfer.js';
import type { FileCalls } from '../files/index.js';

export type { DownloadResultInfo, UploadOptions } from './transfer.js';

export interface CallOptions {
  readonly signal?: AbortSignal | undefined;
  /** The configured mailbox the call is made for: the label its retries are counted under (mailbox-calls.ts). */
  readonly mailbox?: string | undefined;
}

export interface PendingOptions extends CallOptions {
  /**
   * Parcels of this mailbox the caller gave up on, which the service may still list: the list
   * keeps that many records more than `api.limits.maxListEntries` (list-allowance.ts).
   */
  readonly givenUp?: number | undefined;
}

export interface DownloadOptions extends CallOptions {
  /** Byte count known from the list: verified too. */
  readonly expectedBytes?: number | undefined;
  /**
   * The most content bytes the destination has room for (the caller's free space less its margin):
   * counted on the bytes as they arrive, so a declared size cannot talk past it; the attempt stops
   * before the first byte past it (DownloadRoomError).
   */
  readonly roomBytes?: number | undefined;
  /**
   * Called with the content bytes written so far at the end of each `api.limits.rateWindowMs` in
   * which some arrived: a single large download is busy, not a stalled cycle.
   */
  readonly onProgress?: ((bytes: number) => void) | undefined;
}

export interface UploadCallOptions extends CallOptions {
  /** Called once the whole body was handed to the socket (the crash tests' `out.request-sent`). */
  readonly onBodySent?: () => void;
  /** How the file is read: inline calls for a small file on a local filesystem (files/calls). */
  readonly calls?: FileCalls;
}

/**
 * Where a download goes, one fresh destination per attempt: a download that broke off half way is
 * retried into a new, empty file (a plain Writable cannot be reset, so it is retried only until
 * its first byte).
 */
export interface DownloadTarget {
  /** A new, empty destination for one attempt. Not ended by the transport. */
  openAttempt(): Promise<Writable>;
  /** Drops what a failed attempt wrote. */
  discardAttempt(): Promise<void>;
}

/** True for a DownloadTarget, false for a plain Writable. */
export function isDownloadTarget(t: DownloadTarget | Writable): t is DownloadTarget {
  return typeof (t as Partial<DownloadTarget>).openAttempt === 'function';
}

/**
 * The destination of one download attempt whose answer `body` has arrived: a fresh one from a
 * DownloadTarget, else the Writable itself. If none can be opened the answer is dropped unread.
 */
export async function openAttemptFor(target: DownloadTarget | Writable, body: { destroy(): void }): Promise<Writable> {
  try {
    return isDownloadTarget(target) ? await target.openAttempt() : target;
  } catch (err) {
    body.destroy();
    throw err;
  }
}

/** Who the credential is: the session's context. Only `mailboxId` is acted on. */
export interface SessionContext {
  readonly mailboxId?: number;
  readonly userId?: number;
  readonly login?: string;
}

/** One parcel as a list or a lookup shows it. */
export interface ParcelSummary {
  readonly parcelId: number;
  readonly fileName: string | null;
  /** Declared size; verified against the content downloaded. */
  readonly bytes?: number;
  readonly gridIdFrom?: number;
  readonly gridIdTo?: number;
  /** As the service sent it (ISO 8601). */
  readonly created?: string;
  /** Parcel status string as sent (unknown values kept), when the service sent one. */
  readonly status?: string;
  /**
   * Set by a lookup (`parcel`) when the record names it: for an inbound parcel, the mailbox whose
   * inbox holds it (REST `mailboxId`, SOAP `MailboxIDTo`).
   */
  readonly inboxMailboxId?: number;
}

/** A record of a list that cannot be acted on (an id above 2^53, no id at all): reported, never skipped silently. */
export interface UnreadableParcel {
  /** Why: a GridResponseError naming the field. */
  readonly error: Error & { readonly code: string };
  readonly fileName?: string;
  /** The id as it arrived, when there was one (possibly rounded). */
  readonly roughId?: string;
}

export interface PendingInbox {
  readonly parcels: ParcelSummary[];
  readonly unreadable: UnreadableParcel[];
  /** Records beyond the per-cycle cap, left for a later cycle (they are still listed on the service). */
  readonly omitted: number;
}

export interface OutboxQuery {
  readonly mailboxId: number;
  /** Parcels created at or after this instant (ISO 8601). */
  readonly since: string;
}

export interface MailboxTransport {
  /** The context of the credential's session (its default mailbox). */
  sessionContext(options?: CallOptions): Promise<SessionContext>;
  /** Inbound parcels waiting to be downloaded. */
  pendingInbox(mailboxId: number, options?: PendingOptions): Promise<PendingInbox>;
  /** One parcel, with its status. */
  parcel(parcelId: number, options?: CallOptions): Promise<ParcelSummary>;
  /**
   * Streams a parcel's content into the target (not ended: the caller fsyncs and closes it).
   * Resets, truncation and timeouts are retried with the same rules as every call.
   */
  downloadParcel(parcelId: number, target: DownloadTarget | Writable, options?: DownloadOptions): Promise<DownloadResultInfo>;
  /** Tells the service the parcel is stored (InBoxReady → InBoxTransferred). */
  confirmParcel(parcelId: number, options?: CallOptions): Promise<void>;
  /** Sends a file; an UploadOutcomeUnknownError means "reconcile before sending again". */
  uploadParcel(filePath: string, upload: UploadOptions, options?: UploadCallOptions): Promise<{ parcelId: number }>;
  /**
   * Outbound parcels created since a moment (to reconcile an upload whose outcome is unknown).
   * Throws on a record it cannot read: a reconciliation that skipped one could resend a file.
   */
  outboxParcels(query: OutboxQuery, options?: CallOptions): AsyncIterable<ParcelSummary>;
  /**
   * The name the service keeps for a grid ID (the description of its record), or undefined when
   * the record has none. Throws when the record cannot be read — a sender's grid ID usually
   * belongs to another tenant, and the service may answer 403/404 for it. Optional: a transport
   * without such a call leaves `{partner}` to the configured names and the grid id.
   */
  partnerName?(gridId: number, options?: CallOptions): Promise<string | undefined>;
  /**
   * The service's clock minus ours, from the `Date` header of its last answer (ServiceClock);
   * undefined before one. Optional: without it, times are compared on our clock alone.
   */
  serviceClockOffsetMs?(): number | undefined;
  /** 429 and 503 answers to any attempt so far (the adaptive concurrency limits back off on them). */
  overloadAnswers?(): number;
  close(): Promise<void>;
}
