// Issue 24 attack 8, the pipeline's side: a confirm whose answer is about another parcel (999), or
// an "ok" that leaves the parcel ready, once read as confirmed; the next poll saw the parcel ready
// again, took it for a reset on the service and placed it again — 12 copies in 25 s. A parcel whose
// placement is recorded is never placed again: its confirm is repeated instead. A reset seen after
// the confirm was seen to take is still a redelivery. Against a scripted service (not our emulator).
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { InboundPipeline } from '../../../src/inbound/index.js';
import { startScriptedService, wireJson, type ScriptedService } from '../../helpers/scripted-service.js';
import { scriptedWorld } from '../../helpers/scripted-world.js';
import { inboxConfig, listFiles } from '../../helpers/world.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(): Promise<{ svc: ScriptedService; inbox: string; pipeline: InboundPipeline }> {
  const svc = await startScriptedService();
  const { dir, client, journal } = scriptedWorld(svc, cleanups, { maxAttempts: 1 });
  const inbox = path.join(dir, 'inbox');
  const pipeline = new InboundPipeline({
    client,
    journal,
    mailbox: { mailboxId: 1001, name: 'mb1001', inbox: inboxConfig(inbox) },
    stateDir: path.join(dir, 'state'),
  });
  await pipeline.checkPrerequisites();
  return { svc, inbox, pipeline };
}

const confirmAnswers: Record<string, string> = {
  'an answer about parcel 999': wireJson({
    success: true,
    data: { parcelId: 999, status: 'InBoxTransferred' },
    errorCode: '',
    message: '',
  }),
  'an "ok" that leaves the parcel ready': wireJson({ success: true, data: true, errorCode: '', message: '' }),
};

describe('a confirm that does not take', () => {
  for (const [label, answer] of Object.entries(confirmAnswers)) {
    it(`${label}: at most one copy in the inbox over several cycles, and the confirm is repeated`, async () => {
      const { svc, inbox, pipeline } = await setup();
      svc.addInbound('po.x12', 'ISA*00*po~');
      svc.variants.fault = (req, res) => {
        if (req.path !== '/v2/parcels/confirm') return false;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(answer);
        return true;
      };
      for (let cycle = 0; cycle < 6; cycle++) {
        await pipeline.runCycle();
        expect(listFiles(inbox).length, `after cycle ${cycle + 1}`).toBeLessThanOrEqual(1);
      }
      expect(listFiles(inbox)).toEqual(['po.x12']);
      const confirms = svc.requests.filter((r) => r.path === '/v2/parcels/confirm').length;
      expect(confirms).toBeGreaterThan(1);

      // The service starts confirming: the next cycle's confirm takes, nothing more is placed.
      svc.variants.fault = undefined;
      await pipeline.runCycle();
      await pipeline.runCycle();
      expect(svc.confirmed()).toHaveLength(1);
      expect(listFiles(inbox)).toEqual(['po.x12']);
    });
  }

  it('an error answer read back as InBoxTransferred (what a download leaves) is not a confirm: it is repeated until one takes', async () => {
    const { svc, inbox, pipeline } = await setup();
    const p = svc.addInbound('po.x12', 'ISA*00*po~');
    let refusals = 2;
    svc.variants.fault = (req, res) => {
      // The service of the developer notes: a download moves the parcel to InBoxTransferred, a confirm to InBoxArchived.
      if (req.path === '/v2/parcels/download') p.status = 'InBoxTransferred';
      if (req.path !== '/v2/parcels/confirm') return false;
      if (refusals-- > 0) {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(wireJson({ success: false, data: null, errorCode: 'InvalidParameter', message: 'parcel is being processed' }));
        return true;
      }
      p.status = 'InBoxArchived';
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(wireJson({ success: true, data: true, errorCode: '', message: '' }));
      return true;
    };
    for (let cycle = 0; cycle < 4; cycle++) await pipeline.runCycle();
    expect(svc.requests.filter((r) => r.path === '/v2/parcels/confirm')).toHaveLength(3);
    expect(p.status).toBe('InBoxArchived');
    expect(listFiles(inbox)).toEqual(['po.x12']);
  });

  it('a parcel reset after its confirm was seen to take is delivered again (redelivery)', async () => {
    const { svc, inbox, pipeline } = await setup();
    const p = svc.addInbound('po.x12', 'ISA*00*po~');
    await pipeline.runCycle();
    await pipeline.runCycle(); // the listing without the parcel: its confirm took
    expect(listFiles(inbox)).toEqual(['po.x12']);
    p.status = 'InBoxReady';
    await pipeline.runCycle();
    await pipeline.runCycle();
    expect(listFiles(inbox)).toHaveLength(2);
  });
});
