// Across a WAN a slot that waits for a confirmation's answer carries nothing: an inbound parcel
// holds its slot for its download only, so with one slot the next parcel's download is on the wire
// while the previous parcel's confirm is still unanswered. Against a scripted service that holds
// the first confirmation until the second download arrives (or gives up after a few seconds).
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { InboundPipeline } from '../../../src/inbound/index.js';
import { startScriptedService } from '../../helpers/scripted-service.js';
import { scriptedWorld } from '../../helpers/scripted-world.js';
import { inboxConfig } from '../../helpers/world.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('inbound: the next download does not wait for the previous confirmation', () => {
  it('with one slot, the second download arrives while the first confirm is held; both are delivered once', async () => {
    const svc = await startScriptedService();
    svc.addInbound('one.x12', 'ISA*one~');
    svc.addInbound('two.x12', 'ISA*two~');
    const downloads = () => svc.requests.filter((r) => r.path.endsWith('/parcels/download')).length;
    let held = false;
    let secondDownloadWhileHeld = false;
    svc.variants.fault = async (req) => {
      if (!held && req.path.endsWith('/parcels/confirm')) {
        held = true;
        const until = Date.now() + 5000;
        while (downloads() < 2 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
        secondDownloadWhileHeld = downloads() >= 2;
      }
      return false;
    };
    const { dir, client, journal } = scriptedWorld(svc, cleanups);
    const inbox = path.join(dir, 'inbox');
    const p = new InboundPipeline({
      client,
      journal,
      mailbox: { mailboxId: 1001, name: 'mb1001', inbox: inboxConfig(inbox, { concurrency: 1 }) },
      stateDir: path.join(dir, 'state'),
    });
    await p.checkPrerequisites();
    const r = await p.runCycle();
    expect(secondDownloadWhileHeld).toBe(true);
    expect(r).toMatchObject({ placed: 2, confirmed: 2, failed: 0 });
    expect(fs.readdirSync(inbox).sort()).toEqual(['one.x12', 'two.x12']);
    expect(svc.confirmed()).toHaveLength(2);
  }, 20_000);
});
