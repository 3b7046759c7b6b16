// Issue 24, a leftover of attack 1: the inbound free-space check trusted the parcel's declared size.
// A service that declares no size (or one that says nothing true) got as much room as it sent: the
// content went on until the disk was full, below the `inbox.minFreeBytes` margin the operator set
// for everyone else on that disk. The margin now holds on the bytes as they arrive; the declared
// size only refuses early.
//
// The disk is real: staging and inbox live on an 8 MiB tmpfs (mounting one needs root; skipped
// with a notice otherwise). The service is scripted (not our emulator).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EventBus, type PipelineEvents } from '../../../src/events/index.js';
import { InboundPipeline } from '../../../src/inbound/index.js';
import { isRoot, prerequisite } from '../../helpers/require-tool.js';
import { startScriptedService } from '../../helpers/scripted-service.js';
import { scriptedWorld } from '../../helpers/scripted-world.js';
import { inboxConfig, listFiles } from '../../helpers/world.js';

const MiB = 1024 * 1024;
const canMount = prerequisite(
  'root',
  isRoot,
  'mounting the small tmpfs needs root: the free-space margin during a download is not checked',
);

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('the inbound free-space margin', () => {
  it.skipIf(!canMount)('holds on the bytes a download actually sends, not on the size the service declares', async () => {
    const svc = await startScriptedService();
    const { dir, client, journal } = scriptedWorld(svc, cleanups);
    const small = path.join(dir, 'small');
    fs.mkdirSync(small);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m,mode=0755', 'tmpfs', small]);
    cleanups.push(() => void execFileSync('umount', ['-l', small]));
    const inbox = path.join(small, 'inbox');
    const free = (): number => {
      const st = fs.statfsSync(small);
      return st.bavail * st.bsize;
    };
    // No size in the list, none in the download's answer: 6 MiB of content against 4 MiB of room.
    const parcel = svc.addInbound('big.x12', Buffer.alloc(6 * MiB, 'A'));
    svc.variants.record = ({ bytes: _bytes, ...r }) => r;
    svc.variants.download = ({ bytes: _bytes, ...d }) => d;
    const events = new EventBus<PipelineEvents>();
    const deferred: (string | undefined)[] = [];
    events.on('inbound:deferred', (e) => deferred.push(e.reason));
    const pipeline = new InboundPipeline({
      client,
      journal,
      events,
      mailbox: {
        mailboxId: 1001,
        name: 'mb1001',
        inbox: inboxConfig(inbox, { stagingDir: path.join(small, 'staging'), minFreeBytes: 4 * MiB }),
      },
      stateDir: path.join(dir, 'state'),
    });
    await pipeline.checkPrerequisites();
    let lowest = free();
    const sampler = setInterval(() => (lowest = Math.min(lowest, free())), 1);
    cleanups.push(() => clearInterval(sampler));

    const result = await pipeline.runCycle();
    expect(result).toMatchObject({ placed: 0, confirmed: 0, deferred: 1, failed: 0 });
    expect(listFiles(inbox)).toEqual([]);
    expect(listFiles(path.join(small, 'staging'))).toEqual([]);
    expect(deferred).toHaveLength(1);
    expect(deferred[0]).toContain('free space');
    expect(parcel.status).toBe('InBoxReady');
    expect(svc.confirmed()).toEqual([]);
    expect(lowest).toBeGreaterThanOrEqual(4 * MiB);
    // Not an attempt against the parcel: it waits for space, it does not fail.
    for (let i = 0; i < 3; i++) await pipeline.runCycle();
    expect(await journal.get('SELECT state, attempts FROM inbound_parcels')).toEqual({ state: 'listed', attempts: 0 });
  });
});
