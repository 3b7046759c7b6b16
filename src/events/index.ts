export { EventBus, type EventMapOf } from './event-bus.js';
export type { DeliveredEvent, PipelineEvents, ProblemEvent } from './pipeline-events.js';
