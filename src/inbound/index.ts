export { InboundPipeline, GridNameCollisionError, emptyInboundResult } from './pipeline.js';
export type { InboundCycleResult, InboundMailbox, InboundPipelineOptions, InboxConfig } from './pipeline.js';
