/** The journal: what other folders may import from `src/journal`. */
export { Journal } from './db.js';
export { JournalLockedError } from './sqlite-lock.js';
export type { OpenJournalOptions } from './db.js';
export { PgJournal, PG_SCHEMA_VERSION } from './postgres.js';
export { PG_TIMEOUTS } from './postgres-connection.js';
export type { CommitOptions, EventInput, JournalStore, JournalTx, Leases } from './store.js';
export { PRUNE_BATCH } from './store.js';
export { openJournal, openExistingJournal, describeJournal, isPostgresUrl, sqliteJournalPath } from './open.js';
export type { JournalLocation, OpenOptions } from './open.js';
export {
  JournalLeaseLostError,
  selfFenceDeadline,
  mayAct,
  fairShare,
  planLeases,
  servedMailboxes,
  defaultInstanceName,
  ALWAYS_HELD,
} from './lease.js';
export type { Lease, LeaseRow, MailboxLease } from './lease.js';
export { JournalUnavailableError } from './unavailable-error.js';
export { JournalSchemaTooNewError } from './schema-error.js';
export { JournalSchemaDamagedError } from './schema-damaged-error.js';
export { copyJournal, assertNotInUse, JournalInUseError, JournalSchemaMismatchError } from './copy.js';
export type { CopiedTable } from './copy.js';
export { crashPoint, pausePoint } from './crash-points.js';
export { recordedService, recordService, holdsRows, JournalServiceChangedError } from './service.js';
export { InboundJournal, INBOUND_STATES, INBOUND_UNFINISHED, IllegalTransitionError, REDELIVERY_REQUESTED } from './inbound.js';
export type { InboundJournalOptions, InboundRow, InboundState } from './inbound.js';
export { pruneFailedParcels } from './inbound-failed.js';
export { IllegalOutboundTransitionError, OutboundJournal, OUTBOUND_STATES, OUTBOUND_UNFINISHED } from './outbound.js';
export type { OutboundRow, OutboundState } from './outbound.js';
export type { ErrorDecision } from './outbound.js';
