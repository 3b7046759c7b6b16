// An upload whose answer was lost is looked for in the outbox list before anything is sent again.
// When that list is refused for good (403: the key lost the right to read it) or answers what
// cannot be read, the file stayed `uploading` in processing/ and was asked about at every pass, for
// ever — never sent twice, but never ending anywhere an operator looks. After `maxAttempts` it now
// goes to errorDir with a report saying that only the service can tell whether it arrived. Against
// a scripted service (not our emulator).
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { OutboundJournal } from '../../../src/journal/index.js';
import { x12 } from '../../helpers/edi.js';
import { startScriptedService, wireJson } from '../../helpers/scripted-service.js';
import { scriptedFolders } from '../../helpers/scripted-world.js';
import { listFiles, outboundPipeline } from '../../helpers/world.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('an unknown upload the outbox list refuses to tell about', () => {
  it('ends in errorDir after maxAttempts, sent once, with a report that says to check the service', async () => {
    const svc = await startScriptedService();
    let uploads = 0;
    svc.variants.fault = (req, res) => {
      if (req.path === '/v2/parcels/upload' && uploads++ === 0) {
        res.destroy(); // taken or not: the answer is lost
        return true;
      }
      if (req.path !== '/v2/parcels/outbox-list') return false;
      res.writeHead(403, { 'content-type': 'application/json' });
      res.end(wireJson({ success: false, data: null, errorCode: 'AccessDenied', message: 'not allowed to list the outbox' }));
      return true;
    };
    const { client, journal, dirs } = scriptedFolders(svc, cleanups, { maxAttempts: 1 });
    fs.writeFileSync(path.join(dirs.outbox, 'po.x12'), x12(9));
    const p = outboundPipeline({ client, journal, dirs }, { gridIdFrom: 7001, gridIdTo: 7002, maxAttempts: 3 });
    await p.checkPrerequisites();
    for (let pass = 0; pass < 6; pass++) await p.runCycle();
    expect(uploads).toBe(1);
    expect(listFiles(dirs.error)).toEqual(['po.x12', 'po.x12.error.json']);
    const report = JSON.parse(fs.readFileSync(path.join(dirs.error, 'po.x12.error.json'), 'utf8'));
    expect(report.reason).toMatch(/outcome is unknown.*check on the service/);
    expect(report).toMatchObject({ errorCode: 'AccessDenied', httpStatus: 403, attempts: 3 });
    const rows = await new OutboundJournal(journal).inStates(1001, dirs.outbox, ['uploading', 'in_error']);
    expect(rows.map((r) => r.state)).toEqual(['in_error']);
    expect(listFiles(path.join(dirs.state, 'processing'))).toEqual([]);
  });
});
