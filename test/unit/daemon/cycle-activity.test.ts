// Which steps count as a running cycle's progress for /readyz: only those inside a cycle of the same
// mailbox and direction. An outbox watched between cycles (schedule.outbound: continuous) sends
// without any cycle running; counted, it kept a daemon whose cycles hung looking fresh.
import { describe, expect, it } from 'vitest';
import { watchCycleActivity } from '../../../src/daemon/cycle-activity.js';
import { EventBus, type PipelineEvents } from '../../../src/events/index.js';

describe('watchCycleActivity', () => {
  it('counts forward steps inside a running cycle of their mailbox and direction only', () => {
    const events = new EventBus<PipelineEvents>();
    let moved = 0;
    watchCycleActivity(events, () => moved++);
    const sent = { mailbox: 'a', count: 1, bytes: 10 };

    events.emit('outbound:sent', sent); // continuous outbox, no cycle
    events.emit('cycle:start', { mailbox: 'a', direction: 'in' });
    events.emit('outbound:sent', sent); // another direction's cycle
    events.emit('cycle:start', { mailbox: 'b', direction: 'out' });
    events.emit('outbound:sent', sent); // another mailbox's cycle
    expect(moved).toBe(0);

    events.emit('inbound:received', { mailbox: 'a', count: 1, bytes: 5 });
    events.emit('inbound:placed', { mailbox: 'a', count: 1 });
    events.emit('inbound:deferred', { mailbox: 'a', count: 1, reason: 'disk full' }); // not progress
    events.emit('inbound:failed', { mailbox: 'a', count: 1 }); // not progress
    expect(moved).toBe(2);

    events.emit('cycle:end', { mailbox: 'a', direction: 'in', durationMs: 1, counts: {} });
    events.emit('inbound:received', { mailbox: 'a', count: 1, bytes: 5 });
    expect(moved).toBe(2);
  });
});
