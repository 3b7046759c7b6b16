/** The journal: what other folders may import from `src/journal`. */
export { Journal, JournalLockedError } from './db.js';
export type { OpenJournalOptions } from './db.js';
export { PgJournal, PG_SCHEMA_VERSION, PG_TIMEOUTS } from './postgres.js';
export type { CommitOptions, EventInput, JournalStore, JournalTx, Leases } from './store.js';
export { openJournal, describeJournal, isPostgresUrl, sqliteJournalPath } from './open.js';
export type { JournalLocation, OpenOptions } from './open.js';
export { JournalLeaseLostError, selfFenceDeadline, mayAct, fairShare, planLeases, defaultInstanceName, ALWAYS_HELD } from './lease.js';
export type { Lease, LeaseRow, MailboxLease } from './lease.js';
export { JournalUnavailableError } from './unavailable-error.js';
export { JournalSchemaTooNewError } from './schema-error.js';
export { copyJournal, assertNotInUse, JournalInUseError, JournalSchemaMismatchError } from './copy.js';
export type { CopiedTable } from './copy.js';
export { crashPoint, pausePoint } from './crash-points.js';
export { InboundJournal, INBOUND_STATES, IllegalTransitionError, REDELIVERY_REQUESTED } from './inbound.js';
export type { InboundJournalOptions, InboundRow, InboundState } from './inbound.js';
export { OutboundJournal, OUTBOUND_STATES } from './outbound.js';
export type { OutboundRow, OutboundState } from './outbound.js';
export type { ErrorDecision } from './outbound.js';
