export { OutboundPipeline } from './pipeline.js';
export type { OutboundCycleResult, OutboundMailbox, OutboundPipelineOptions, OutboxConfig } from './pipeline.js';
export { validateEnvelope, ignoreMatcher, StabilityTracker } from './checks.js';
