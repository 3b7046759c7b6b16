/**
 * What the pipelines tell the rest of the daemon, as they go: one event per item that moved (or a
 * batch, `count`), named `<direction>:<what happened>`. Metrics, the stuck-deliveries watch, the
 * cycle record and the progress display of `once` subscribe; nothing polls the pipelines' counters.
 */

interface ItemsEvent {
  /** The mailbox's name (`mailboxes[].name`, default `mb<id>`). */
  readonly mailbox: string;
  readonly count: number;
}

export interface DeliveredEvent extends ItemsEvent {
  /** Bytes of the items delivered. */
  readonly bytes: number;
  /** The one item delivered, when the event is about one (post-delivery hooks read it). */
  readonly item?: DeliveredItem;
}

export interface DeliveredItem {
  readonly parcelId: number;
  /** The name the service knows it by. */
  readonly fileName: string | null;
  /** Where the file is now: the inbox file, the copy in sentDir, or null when archived by deletion. */
  readonly path: string | null;
  /** The trading partner's grid id: the sender of an inbound parcel, the receiver of an outbound one, when known. */
  readonly partner: number | null;
  /** The partner's name as `{partner}` gives it (one folder-safe segment), when the pipeline knows it. */
  readonly partnerName?: string;
}

export interface ListedEvent extends ItemsEvent {
  /** Declared size of the parcels listed (0 for a parcel whose size the service does not give). */
  readonly bytes: number;
}

export interface ProblemEvent extends ItemsEvent {
  /** Why, in an operator's words, when known. */
  readonly reason?: string;
  /** Why, as a stable code (an error code of docs/errors.md), when known: what the debug line and tools decide on. */
  readonly code?: string;
  /** The parcel concerned, when the event is about one. */
  readonly parcelId?: number;
  /** The file concerned (its name in the outbox), when the event is about one. */
  readonly file?: string;
}

/** A mailbox's cycle of one direction begins (`once` and `run` alike). */
export interface CycleStartEvent {
  readonly mailbox: string;
  readonly direction: 'in' | 'out';
}

/** …and ends: what it did and how long it took; `code` when it ended with an error. */
export interface CycleEndEvent extends CycleStartEvent {
  readonly durationMs: number;
  readonly counts: Readonly<Record<string, number>>;
  readonly code?: string;
}

/** What a mailbox's pending list showed: the service keeps a parcel there only so long (`InBoxTimeout`). */
export interface WaitingEvent extends ItemsEvent {
  /** Age on the service's clock of the oldest parcel listed with a creation time; 0 when none waits. */
  readonly oldestAgeSeconds: number;
}

/** A download still receiving bytes, at the end of each `api.limits.rateWindowMs` it lasts. */
export interface TransferringEvent {
  readonly mailbox: string;
  readonly parcelId: number;
  /** Content bytes written so far in this attempt. */
  readonly bytes: number;
}

export interface PipelineEvents {
  /** New parcels seen in the pending list and journalled. */
  'inbound:listed': ListedEvent;
  /** Parcels placed in the inbox (confirmation follows). */
  'inbound:placed': ItemsEvent;
  /** Parcels placed and confirmed: delivered. */
  'inbound:received': DeliveredEvent;
  /** Confirmed parcels reset on the service and taken again. */
  'inbound:redelivered': ItemsEvent;
  /** Parcels that failed for good (maxAttempts, permanent error); they stay on the service. */
  'inbound:failed': ProblemEvent;
  /** Parcels left for a later cycle (disk full, inbox unwritable, service errors). */
  'inbound:deferred': ProblemEvent;
  /** After each listing: how many parcels wait on the service and how old the oldest is. */
  'inbound:waiting': WaitingEvent;
  /** Listed parcels gridsync cannot act on (no usable id): left on the service, logged once. */
  'inbound:skipped': ProblemEvent;
  /** A download that outlasts a rate window and still receives bytes. */
  'inbound:transferring': TransferringEvent;
  /** Files claimed from an outbox. */
  'outbound:claimed': ItemsEvent;
  /** Files whose upload the service accepted (archiving follows). */
  'outbound:uploaded': ItemsEvent;
  /** Files uploaded and archived: delivered. */
  'outbound:sent': DeliveredEvent;
  /** Files refused before upload (invalid interchange, empty, duplicate, …); in errorDir. */
  'outbound:rejected': ProblemEvent;
  /** Files that failed for good (permanent service error, attempts exhausted); in errorDir. */
  'outbound:failed': ProblemEvent;
  /** Files left for a later cycle. */
  'outbound:deferred': ProblemEvent;
  'cycle:start': CycleStartEvent;
  'cycle:end': CycleEndEvent;
}
