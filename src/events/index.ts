export { EventBus, type EventMapOf } from './event-bus.js';
export type {
  CycleEndEvent,
  CycleStartEvent,
  DeliveredEvent,
  DeliveredItem,
  PipelineEvents,
  ProblemEvent,
  WaitingEvent,
} from './pipeline-events.js';
