// A big drop across a WAN: the first uploads go out while the rest of the drop is still being
// claimed, instead of after the last claim. Against a scripted service that looks, when the first
// upload arrives, at how many of the dropped files are still waiting in the outbox.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { x12 } from '../../helpers/edi.js';
import { startScriptedService } from '../../helpers/scripted-service.js';
import { scriptedWorld } from '../../helpers/scripted-world.js';
import { listFiles, outboundPipeline } from '../../helpers/world.js';

const DROPPED = 200;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('outbound: a big drop starts sending before it is all claimed', () => {
  it('the first upload arrives while dropped files still wait in the outbox; every file is sent once', async () => {
    const svc = await startScriptedService();
    const { dir: root, client, journal } = scriptedWorld(svc, cleanups);
    const dirs = Object.fromEntries(['inbox', 'outbox', 'sent', 'error', 'state'].map((d) => [d, path.join(root, d)])) as Record<
      'inbox' | 'outbox' | 'sent' | 'error' | 'state',
      string
    >;
    for (const d of Object.values(dirs)) fs.mkdirSync(d);
    let waitingAtFirstUpload: number | undefined;
    svc.variants.fault = (req) => {
      if (req.path === '/v2/parcels/upload' && waitingAtFirstUpload === undefined) waitingAtFirstUpload = listFiles(dirs.outbox).length;
      return false;
    };
    for (let i = 0; i < DROPPED; i++) fs.writeFileSync(path.join(dirs.outbox, `po-${i}.x12`), x12(i));
    const past = new Date(Date.now() - 60_000);
    for (const f of listFiles(dirs.outbox)) fs.utimesSync(path.join(dirs.outbox, f), past, past);
    const p = outboundPipeline({ client, journal, dirs }, { gridIdFrom: 7001, gridIdTo: 7002, concurrency: 1 });
    await p.checkPrerequisites();
    await p.runCycle();
    expect(waitingAtFirstUpload).toBeGreaterThan(0);
    expect(listFiles(dirs.sent)).toHaveLength(DROPPED);
    expect(svc.parcels.filter((x) => x.direction === 'out')).toHaveLength(DROPPED);
  }, 60_000);
});
