// The service drops a parcel left in the inbox past InBoxTimeout (typically at most 240 h): each
// listing reports how old the oldest waiting parcel is (inbound:waiting → the gauge
// gridsync_inbox_oldest_waiting_seconds), aged on the service's clock — here 15 minutes behind
// ours, which must not add 15 minutes. Against a scripted service (not our emulator).
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EventBus, type PipelineEvents, type WaitingEvent } from '../../../src/events/index.js';
import { InboundPipeline } from '../../../src/inbound/index.js';
import { startScriptedService } from '../../helpers/scripted-service.js';
import { scriptedWorld } from '../../helpers/scripted-world.js';
import { inboxConfig } from '../../helpers/world.js';

const HOUR = 3_600_000;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('the age of the oldest parcel waiting on the service', () => {
  it('is reported per mailbox after each listing, on the service’s clock, and drops to 0 once delivered', async () => {
    const svc = await startScriptedService();
    svc.variants.clockOffsetMs = -15 * 60_000;
    const serviceNow = Date.now() - 15 * 60_000;
    const stamp = (ms: number): string => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
    svc.addInbound('old.x12', 'ISA*old~', { created: stamp(serviceNow - 30 * HOUR) });
    svc.addInbound('new.x12', 'ISA*new~', { created: stamp(serviceNow - 2 * HOUR) });
    const { dir, client, journal } = scriptedWorld(svc, cleanups);
    const events = new EventBus<PipelineEvents>();
    const seen: WaitingEvent[] = [];
    events.on('inbound:waiting', (e) => seen.push(e));
    const p = new InboundPipeline({
      client,
      journal,
      mailbox: { mailboxId: 1001, name: 'mb1001', inbox: inboxConfig(path.join(dir, 'inbox')) },
      stateDir: path.join(dir, 'state'),
      events,
    });
    await p.checkPrerequisites();
    // The session call before the listing tells the client the service's clock.
    await client.sessionContext();
    await p.runCycle();
    const first = seen[0] as WaitingEvent;
    expect(first).toMatchObject({ mailbox: 'mb1001', count: 2 });
    // Within a minute of 30 h (the Date header counts whole seconds; the test takes some).
    expect(Math.abs(first.oldestAgeSeconds - 30 * 3600)).toBeLessThan(60);
    await p.runCycle();
    expect(seen.at(-1)).toMatchObject({ count: 0, oldestAgeSeconds: 0 });
  });
});
