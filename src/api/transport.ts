/**
 * What the pipelines need from the service, and nothing more: the small interface a transport
 * (REST v2 today, SOAP next) implements. Records carry only the fields gridsync acts on; each
 * transport decodes its own wire shapes into them.
 */
import type { Writable } from 'node:stream';
import type { DownloadResultInfo, UploadOptions } from './transfer.js';

export type { DownloadResultInfo, UploadOptions } from './transfer.js';

export interface CallOptions {
  readonly signal?: AbortSignal | undefined;
}

export interface DownloadOptions extends CallOptions {
  /** Byte count known from the list: verified too. */
  readonly expectedBytes?: number | undefined;
}

export interface UploadCallOptions extends CallOptions {
  /** Called once the whole body was handed to the socket (the crash tests' `out.request-sent`). */
  readonly onBodySent?: () => void;
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
  pendingInbox(mailboxId: number, options?: CallOptions): Promise<ParcelSummary[]>;
  /** One parcel, with its status. */
  parcel(parcelId: number, options?: CallOptions): Promise<ParcelSummary>;
  /** Streams a parcel's content into `writable` (not ended: the caller fsyncs and closes it). */
  downloadParcel(parcelId: number, writable: Writable, options?: DownloadOptions): Promise<DownloadResultInfo>;
  /** Tells the service the parcel is stored (InBoxReady → InBoxTransferred). */
  confirmParcel(parcelId: number, options?: CallOptions): Promise<void>;
  /** Sends a file; an UploadOutcomeUnknownError means "reconcile before sending again". */
  uploadParcel(filePath: string, upload: UploadOptions, options?: UploadCallOptions): Promise<{ parcelId: number }>;
  /** Outbound parcels created since a moment (to reconcile an upload whose outcome is unknown). */
  outboxParcels(query: OutboxQuery, options?: CallOptions): AsyncIterable<ParcelSummary>;
  close(): Promise<void>;
}
