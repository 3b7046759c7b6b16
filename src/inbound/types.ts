/** What the inbound modules share: the inbox's configuration, the pipeline's options, the cycle counters, the context. */
import type { MailboxTransport } from '../api/index.js';
import type { InboxSettings } from '../config/index.js';
import type { DeliveredItem, EventBus, PipelineEvents } from '../events/index.js';
import type { InboundJournal, JournalStore, MailboxLease } from '../journal/index.js';
import type { Logger } from '../log.js';
import type { PartnerNames } from './partner-names.js';

/** The inbox's config section as the schema gives it (the schema is the one source of its keys). */
export type InboxConfig = Readonly<Omit<InboxSettings, 'group'>> & {
  /** Numeric gid (config resolves group names). */
  readonly gid?: number;
};

export interface InboundMailbox {
  readonly mailboxId: number;
  readonly name: string;
  readonly inbox: InboxConfig;
}

export interface InboundPipelineOptions {
  readonly client: MailboxTransport;
  readonly journal: JournalStore;
  readonly mailbox: InboundMailbox;
  readonly stateDir: string;
  readonly logger?: Logger;
  readonly now?: () => number;
  /** Where the pipeline reports progress (`inbound:*`); the daemon shares one bus among mailboxes. */
  readonly events?: EventBus<PipelineEvents>;
  /** `{partner}` names; the daemon shares one (and its cache) among mailboxes. Default: asks `client`. */
  readonly partnerNames?: PartnerNames;
  /** The mailbox's lease in a shared journal; default `ALWAYS_HELD` (SQLite). */
  readonly lease?: MailboxLease;
}

export interface InboundCycleResult {
  listed: number;
  placed: number;
  confirmed: number;
  failed: number;
  redelivered: number;
  /** Parcels left for a later cycle (disk full, inbox not writable, service errors). */
  deferred: number;
  /** Listed parcels that cannot be acted on (an id above 2^53, no id): left on the service. */
  unreadable: number;
  /** Bytes of the parcels confirmed in this cycle. */
  bytes: number;
}

/** A cycle's counters before it starts (the daemon sums cycles with it too). */
export function emptyInboundResult(): InboundCycleResult {
  return { listed: 0, placed: 0, confirmed: 0, failed: 0, redelivered: 0, deferred: 0, unreadable: 0, bytes: 0 };
}

/** One inbox as the listing, the download and the failure handling see it. */
export interface InboundContext {
  readonly client: MailboxTransport;
  readonly journal: InboundJournal;
  readonly inbox: InboxConfig;
  readonly mailboxId: number;
  /** The mailbox's name, as events carry it. */
  readonly mailbox: string;
  readonly stagingDir: string;
  readonly logger: Logger;
  readonly now: () => number;
  /** The mailbox's lease in a shared journal (`ALWAYS_HELD` with SQLite). */
  readonly lease: MailboxLease;
  readonly events: EventBus<PipelineEvents>;
  /** Adds to a cycle's counters and tells the subscribers (`inbound:*` events). */
  tally(result: InboundCycleResult, key: Exclude<keyof InboundCycleResult, 'bytes'>, n?: number, detail?: InboundTallyDetail): void;
}

/** What an event about counted parcels may tell besides the count: bytes, the item, why (reason, stable code), the parcel. */
export interface InboundTallyDetail {
  readonly bytes?: number;
  readonly reason?: string;
  readonly code?: string;
  readonly parcelId?: number;
  readonly item?: DeliveredItem;
}
