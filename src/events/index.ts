export { EventBus, type EventMapOf } from './event-bus.js';
export type { DeliveredEvent, DeliveredItem, PipelineEvents, ProblemEvent } from './pipeline-events.js';
