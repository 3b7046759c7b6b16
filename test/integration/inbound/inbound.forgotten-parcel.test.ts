// A parcel placed in the inbox whose confirm can never take: the service no longer knows it (it
// expired, or was deleted, while the inbox was unusable and the parcel waited staged). Its confirm
// and the lookup after it answer 404 ObjectNotFound. It was deferred to the next cycle, every
// cycle, for ever — two calls a cycle, the name held, a warning summed up, and nothing an operator
// would look at. It is failed now, with an error that says where the file is. Against a scripted
// service (not our emulator).
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { InboundPipeline } from '../../../src/inbound/index.js';
import { InboundJournal } from '../../../src/journal/index.js';
import { recorder } from '../../helpers/log-recorder.js';
import { startScriptedService } from '../../helpers/scripted-service.js';
import { scriptedWorld } from '../../helpers/scripted-world.js';
import { inboxConfig, listFiles } from '../../helpers/world.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('a placed parcel the service no longer knows', () => {
  it('ends failed, with its file in the inbox and an error line, instead of being deferred every cycle', async () => {
    const svc = await startScriptedService();
    const { dir, client, journal } = scriptedWorld(svc, cleanups, { maxAttempts: 1 });
    const inbox = path.join(dir, 'inbox');
    const logger = recorder();
    const pipeline = new InboundPipeline({
      client,
      journal,
      mailbox: { mailboxId: 1001, name: 'mb1001', inbox: inboxConfig(inbox) },
      stateDir: path.join(dir, 'state'),
      logger,
    });
    await pipeline.checkPrerequisites();
    svc.addInbound('po.x12', 'ISA*00*po~');
    // The inbox unusable: the parcel is downloaded and staged, its placement deferred.
    fs.rmSync(inbox, { recursive: true });
    fs.writeFileSync(inbox, 'not a folder');
    expect(await pipeline.runCycle()).toMatchObject({ confirmed: 0, deferred: 1 });
    // Meanwhile the service forgets the parcel; then the inbox comes back.
    svc.parcels.splice(0);
    fs.rmSync(inbox);
    fs.mkdirSync(inbox);

    const results = [];
    for (let cycle = 0; cycle < 3; cycle++) results.push(await pipeline.runCycle());
    expect(listFiles(inbox)).toEqual(['po.x12']);
    const rows = await new InboundJournal(journal).inStates(1001, ['placed', 'failed']);
    expect(rows.map((r) => r.state)).toEqual(['failed']);
    expect(results[0]).toMatchObject({ failed: 1 });
    // Once failed, later cycles leave it alone.
    expect(results.slice(1).map((r) => r.deferred + r.failed)).toEqual([0, 0]);
    const failed = logger.lines.filter((l) => l.level === 'error' && /no longer knows it/.test(l.msg));
    expect(failed).toHaveLength(1);
    expect(failed[0]?.obj.file).toBe(path.join(inbox, 'po.x12'));
  });
});
