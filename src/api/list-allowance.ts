/**
 * How many records a list may keep when the caller accounts for some of them. The pending list
 * goes on showing the parcels gridsync gave up on (they stay ready on the service until it drops
 * them), oldest first: with as many of them as `api.limits.maxListEntries` at its head, a list cut
 * at the limit showed nothing else, and newer parcels were never seen. The caller says how many
 * such records it expects, and the list keeps that many more — at most the limit once again, so
 * that what a list holds stays bounded whatever the journal holds. Shared by the REST and the
 * SOAP client.
 */
import type { ClientLimits } from './core.js';

export function listLimits(limits: ClientLimits, accounted = 0): ClientLimits {
  const extra = Math.min(Math.max(0, Math.floor(accounted)), limits.maxListEntries);
  return !(extra > 0) ? limits : { ...limits, maxListEntries: limits.maxListEntries + extra };
}
