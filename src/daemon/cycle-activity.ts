/**
 * Items moving inside a running cycle. A month-end cycle (thousands of parcels, or across a slow
 * WAN) can run far longer than /readyz's freshness window; it ends in success only when it ends,
 * and until then the daemon looked stalled: 503 while it delivered at full speed. A step that an
 * item took forward in a cycle still running is what tells busy from stalled.
 *
 * Only steps inside a cycle of the same mailbox and direction count: an outbox watched between
 * cycles (`schedule.outbound: continuous`) must not keep a daemon whose cycles hang looking fresh.
 */
import type { EventBus, PipelineEvents } from '../events/index.js';

/**
 * Steps forward: the disk or the service took an item (failures and deferrals are not progress),
 * or a download's bytes still arrive (a single large parcel can take longer than the window).
 */
const FORWARD = [
  'inbound:placed',
  'inbound:received',
  'inbound:transferring',
  'outbound:uploaded',
  'outbound:sent',
  'outbound:rejected',
] as const;

/** Calls `moved` whenever an item steps forward inside a running cycle of its mailbox and direction. */
export function watchCycleActivity(events: EventBus<PipelineEvents>, moved: () => void): void {
  const running = new Set<string>();
  const key = (mailbox: string, direction: 'in' | 'out'): string => `${mailbox}\0${direction}`;
  events.on('cycle:start', (e) => running.add(key(e.mailbox, e.direction)));
  events.on('cycle:end', (e) => running.delete(key(e.mailbox, e.direction)));
  for (const name of FORWARD) {
    const direction = name.startsWith('inbound:') ? 'in' : 'out';
    events.on(name, (e) => {
      if (running.has(key(e.mailbox, direction))) moved();
    });
  }
}
