// Issue 24, weak item: the service's clock is 15 minutes behind ours and an upload's outcome is
// unknown (the service took it, the answer was lost). The reconciliation looked for parcels created
// since the attempt's start by OUR clock, less a 10-minute slack: the parcel, stamped by the
// service's clock, fell before the window and the file was uploaded a second time. The window is
// now in the service's time (its answers' Date header). Against a scripted service, not our emulator.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { x12 } from '../../helpers/edi.js';
import { startScriptedService, type ScriptedService } from '../../helpers/scripted-service.js';
import { scriptedFolders } from '../../helpers/scripted-world.js';
import { listFiles, outboundPipeline } from '../../helpers/world.js';

const MINUTE = 60_000;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The first upload is taken by the service, then its connection is cut before any answer. */
function takeFirstUploadSilently(svc: ScriptedService): void {
  let cut = false;
  svc.variants.fault = (req, res) => {
    if (req.path !== '/v2/parcels/upload' || cut) return false;
    cut = true;
    const content = Buffer.from(req.body.content as string, 'base64');
    svc.parcels.push({
      parcelId: 9_000_000n,
      mailboxId: 1001,
      fileName: req.body.fileName as string,
      content,
      status: 'outboxPending',
      direction: 'out',
      created: new Date(Date.now() + (svc.variants.clockOffsetMs ?? 0)).toISOString().replace(/\.\d+Z$/, 'Z'),
      gridIdFrom: 7001,
      gridIdTo: 7002,
    });
    res.destroy();
    return true;
  };
}

describe('reconciling an unknown upload against a service whose clock differs from ours', () => {
  for (const offsetMin of [-15, 15]) {
    it(`service clock ${offsetMin > 0 ? 'ahead' : 'behind'} by ${Math.abs(offsetMin)} minutes: one upload only, adopted`, async () => {
      const svc = await startScriptedService();
      svc.variants.clockOffsetMs = offsetMin * MINUTE;
      takeFirstUploadSilently(svc);
      const { client, journal, dirs } = scriptedFolders(svc, cleanups, { maxAttempts: 1 });
      fs.writeFileSync(path.join(dirs.outbox, 'po.x12'), x12(7));
      const p = outboundPipeline({ client, journal, dirs }, { gridIdFrom: 7001, gridIdTo: 7002 });
      await p.checkPrerequisites();
      for (let cycle = 0; cycle < 4 && listFiles(dirs.sent).length === 0; cycle++) await p.runCycle();
      const uploads = svc.parcels.filter((x) => x.direction === 'out');
      expect(uploads.map((x) => x.fileName)).toEqual(['po.x12']);
      expect(listFiles(dirs.sent)).toEqual(['po.x12']);
    });
  }

  it('our clock stepped back an hour between the lost answer and the reconciliation (a clock corrected after boot): one upload only', async () => {
    const svc = await startScriptedService();
    takeFirstUploadSilently(svc);
    const { client, journal, dirs } = scriptedFolders(svc, cleanups, { maxAttempts: 1 });
    fs.writeFileSync(path.join(dirs.outbox, 'po.x12'), x12(8));
    const p = outboundPipeline({ client, journal, dirs }, { gridIdFrom: 7001, gridIdTo: 7002 });
    await p.checkPrerequisites();
    await client.pendingInbox(1001); // a daemon has heard from the service before it uploads: the clocks agree
    await p.runCycle();
    expect(svc.parcels.filter((x) => x.direction === 'out')).toHaveLength(1);
    // Our clock goes back an hour: the service's answers now read an hour ahead of it, so the
    // attempt's start (journalled by our clock) plus the offset seen now lies an hour after the
    // parcel was created — it would not be found, and the file would be sent again.
    svc.variants.clockOffsetMs = 60 * MINUTE;
    await client.pendingInbox(1001); // the inbound side's next poll: the client sees the new offset
    for (let cycle = 0; cycle < 4 && listFiles(dirs.sent).length === 0; cycle++) await p.runCycle();
    expect(svc.parcels.filter((x) => x.direction === 'out').map((x) => x.fileName)).toEqual(['po.x12']);
    expect(listFiles(dirs.sent)).toEqual(['po.x12']);
  });

  // Hostile round 4: the Date header years ahead while the parcels keep the service's true stamps
  // (a proxy with a broken clock answers for the service).
  it('a Date header five years ahead of the stamps: the file is not sent a second time', async () => {
    const svc = await startScriptedService();
    svc.variants.dateOffsetMs = 5 * 365 * 24 * 60 * MINUTE;
    takeFirstUploadSilently(svc);
    const { client, journal, dirs } = scriptedFolders(svc, cleanups, { maxAttempts: 1 });
    fs.writeFileSync(path.join(dirs.outbox, 'po.x12'), x12(9));
    const p = outboundPipeline({ client, journal, dirs }, { gridIdFrom: 7001, gridIdTo: 7002, maxAttempts: 2 });
    await p.checkPrerequisites();
    await client.pendingInbox(1001);
    for (let cycle = 0; cycle < 6 && listFiles(dirs.sent).length + listFiles(dirs.error).length === 0; cycle++) await p.runCycle();
    expect(svc.parcels.filter((x) => x.direction === 'out').map((x) => x.fileName)).toEqual(['po.x12']);
    // Neither sent again nor taken for found: the operator is asked to look (errorDir, its report naming the clock).
    expect(listFiles(dirs.sent)).toEqual([]);
    expect(listFiles(dirs.error)).toContain('po.x12');
    expect(fs.readFileSync(path.join(dirs.error, listFiles(dirs.error).find((f) => f !== 'po.x12') ?? ''), 'utf8')).toMatch(/clock/);
  });

  // Round 5: a `Date` wrong by less than a day (a proxy answering in its local time, labelled GMT)
  // put the window after the parcel, which the 24-hour tolerance let through: the file went twice.
  // An hour off, the window now covers both clocks' readings and finds the parcel; six hours off is
  // beyond the tolerance, and the operator is asked to look.
  for (const [hours, outcome] of [
    [1, 'sent'],
    [6, 'error'],
  ] as const) {
    it(`a Date header ${hours} h ahead of the stamps: one upload only, ${outcome === 'sent' ? 'adopted' : 'errorDir naming the clocks'}`, async () => {
      const svc = await startScriptedService();
      svc.variants.dateOffsetMs = hours * 60 * MINUTE;
      takeFirstUploadSilently(svc);
      const { client, journal, dirs } = scriptedFolders(svc, cleanups, { maxAttempts: 1 });
      fs.writeFileSync(path.join(dirs.outbox, 'po.x12'), x12(10 + hours));
      const p = outboundPipeline({ client, journal, dirs }, { gridIdFrom: 7001, gridIdTo: 7002, maxAttempts: 2 });
      await p.checkPrerequisites();
      await client.pendingInbox(1001);
      for (let cycle = 0; cycle < 6 && listFiles(dirs.sent).length + listFiles(dirs.error).length === 0; cycle++) await p.runCycle();
      expect(svc.parcels.filter((x) => x.direction === 'out').map((x) => x.fileName)).toEqual(['po.x12']);
      if (outcome === 'sent') {
        expect(listFiles(dirs.sent)).toEqual(['po.x12']);
        return;
      }
      expect(listFiles(dirs.sent)).toEqual([]);
      expect(listFiles(dirs.error)).toContain('po.x12');
      expect(fs.readFileSync(path.join(dirs.error, 'po.x12.error.json'), 'utf8')).toMatch(/clock/);
    });
  }
});
