/** What the outbound modules share: the outbox's configuration, the cycle counters, the context. */
import type { OutboxSettings } from '../config/index.js';
import type { DeliveredItem } from '../events/index.js';
import type { FileCalls } from '../files/index.js';
import type { Logger } from '../log.js';
import type { OutboundJournal, MailboxLease } from '../journal/index.js';

/** The outbox's config section as the schema gives it (the schema is the one source of its keys). */
export type OutboxConfig = Readonly<OutboxSettings> & {
  /** Reconciliation looks this far before the attempt's start (service clock skew). Default 10 min. */
  readonly reconcileSlackMs?: number;
};

export interface OutboundMailbox {
  readonly mailboxId: number;
  readonly name: string;
  readonly outbox: OutboxConfig;
  /** The config file the daemon runs with: the requeue hint in error reports names it (`-c`). */
  readonly configFile?: string;
}

export interface OutboundCycleResult {
  claimed: number;
  uploaded: number;
  archived: number;
  rejected: number;
  failed: number;
  deferred: number;
  /** Bytes of the files archived. */
  bytes: number;
}

export function emptyResult(): OutboundCycleResult {
  return { claimed: 0, uploaded: 0, archived: 0, rejected: 0, failed: 0, deferred: 0, bytes: 0 };
}

/** One outbox as the scanner, the sender and the disposal see it. */
export interface OutboxContext {
  /** Cheap file calls, inline while the outbox's folders are all on local filesystems (files/calls). */
  readonly calls: FileCalls;
  /** Decides `calls` again: a share may have been mounted over one of the folders since. */
  refreshCalls(): Promise<void>;
  readonly journal: OutboundJournal;
  readonly cfg: OutboxConfig;
  readonly mailboxId: number;
  readonly processingDir: string;
  /** The config file, for the requeue hint of error reports. */
  readonly configFile?: string;
  readonly logger: Logger;
  readonly now: () => number;
  /** The mailbox's lease in a shared journal (`ALWAYS_HELD` with SQLite). */
  readonly lease: MailboxLease;
  /**
   * How long an upload request may last at most (its call deadline): a row left `uploading` by an
   * earlier lease holder waits this long after the takeover before it is reconciled.
   */
  readonly longestUploadMs: number;
  /** Monotonic milliseconds (the lease's clock). */
  readonly monotonic: () => number;
  /** Adds to the counters of the current cycle and tells the subscribers (`outbound:*` events). */
  tally(key: Exclude<keyof OutboundCycleResult, 'bytes'>, n?: number, detail?: TallyDetail): void;
}

/** What an event about counted items may tell besides the count: bytes, the item, why (reason, stable code), the file. */
export interface TallyDetail {
  readonly bytes?: number;
  readonly reason?: string;
  readonly code?: string;
  readonly file?: string;
  readonly item?: DeliveredItem;
}
