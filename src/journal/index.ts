/** The journal: what other folders may import from `src/journal`. */
export { Journal, JournalLockedError } from './db.js';
export type { OpenJournalOptions, EventInput } from './db.js';
export { crashPoint } from './crash-points.js';
export { InboundJournal, INBOUND_STATES, IllegalTransitionError } from './inbound.js';
export type { InboundJournalOptions, InboundRow, InboundState } from './inbound.js';
export { OutboundJournal, OUTBOUND_STATES } from './outbound.js';
export type { OutboundRow, OutboundState } from './outbound.js';
export type { ErrorDecision } from './outbound.js';
