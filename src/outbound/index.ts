export { OutboundPipeline, EVENT_OF as OUTBOUND_EVENT_OF } from './pipeline.js';
export type { OutboundPipelineOptions } from './pipeline.js';
export type { OutboundCycleResult, OutboundMailbox, OutboxConfig } from './types.js';
export { emptyResult as emptyOutboundResult } from './types.js';
export { validateEnvelope, validateEnvelopeFile, StabilityTracker } from './checks.js';
export { previewOutbox, type OutboxVerdict } from './preview.js';
export { decideResend, type ResendDecision } from './sender.js';
export { ERROR_REPORT_SUFFIX, moveBackToOutbox, readErrorReport, requeueName, type ErrorReport } from './disposal.js';
