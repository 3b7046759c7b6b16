export { InboundPipeline } from './pipeline.js';
export { GridNameCollisionError } from './errors.js';
export { emptyInboundResult } from './types.js';
export { pendingIds, type PendingIds } from './pending-ids.js';
export { undownloaded } from './taken-elsewhere.js';
export type { InboundCycleResult, InboundMailbox, InboundPipelineOptions, InboxConfig } from './types.js';
export { PartnerNames, afterLookup, configuredPartners, decidePartnerName, folderKey, learntFolder } from './partner-names.js';
export type { CachedName, PartnerDecision, PartnerLookup, PartnerNamesOptions } from './partner-names.js';
