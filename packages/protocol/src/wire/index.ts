/**
 * Wire shapes of the Grid EDI exchange service, REST v2 — the one definition shared by the
 * client (`src/api`) and the emulator (`packages/emulator/src`). The wire facts
 * behind them, in our words: docs/wire.md.
 *
 * Glossary
 * - network: a tenant of the service; it contains mailboxes.
 * - mailbox: where parcels arrive (inbox) and leave (outbox); gridsync syncs one or more of them
 *   with local folders. Identified by `mailboxId`.
 * - grid ID: a trading-partner ID (qualifier + identifier, as in an X12 ISA header) owned by one
 *   mailbox; identified by `gridId`. Routing goes from one grid ID to another.
 * - interconnect (partner link): joins two grid IDs; an upload is routed only over an Active one.
 * - parcel: one file sent or received through a mailbox (`parcelId`, 64-bit). Inbound parcels are
 *   `InBoxReady` until confirmed, then `InBoxTransferred`.
 * - interchange: one EDI envelope inside a parcel (X12 ISA…IEA, EDIFACT UNB…UNZ).
 * - envelope (response envelope): `{ success, data, errorCode, message }` around every response.
 * - journal states (gridsync's own, see src/journal): inbound listed → staged →
 *   placed → confirmed | failed; outbound seen → claiming → claimed → uploading → uploaded →
 *   archived | rejected | failed.
 *
 * Parsing rule: responses are parsed leniently (unknown fields and unknown enum strings are kept,
 * never fatal); requests the emulator receives are parsed strictly (unknown enum values → 400).
 */
export * from './scalars.js';
export * from './enums.js';
export * from './envelope.js';
export * from './paging.js';
export * from './records.js';
export * from './callbacks.js';
