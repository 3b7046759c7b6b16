export { InboundPipeline, GridNameCollisionError, emptyInboundResult } from './pipeline.js';
export type { InboundCycleResult, InboundMailbox, InboundPipelineOptions, InboxConfig } from './pipeline.js';
export { PartnerNames, afterLookup, configuredPartners, decidePartnerName, folderKey, learntFolder } from './partner-names.js';
export type { CachedName, PartnerDecision, PartnerLookup, PartnerNamesOptions } from './partner-names.js';
