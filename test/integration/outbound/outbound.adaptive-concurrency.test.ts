// Concurrency that fits the network, outbound: with the default `outbox.concurrency` (adaptive)
// the uploads in flight grow past the old fixed default of 4 across a WAN, and fall back when the
// service answers 503 to what is beyond its capacity. A 503 to an upload leaves its outcome
// unknown: the file is reconciled with the outbox list before it is sent again, so every file
// still reaches the service exactly once. Against a scripted service (not our emulator); no
// timing is asserted, only what the service saw.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { x12 } from '../../helpers/edi.js';
import { startScriptedService } from '../../helpers/scripted-service.js';
import { scriptedWorld } from '../../helpers/scripted-world.js';
import { acrossWan, peakFrom, refusedShareFrom } from '../../helpers/wan-service.js';
import { listFiles, outboundPipeline } from '../../helpers/world.js';

const OLD_FIXED_DEFAULT = 4;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('outbound: adaptive concurrency across a WAN', () => {
  it('grows past the old fixed default, backs off on 503 beyond K uploads in flight; every file sent once', async () => {
    const K = 10;
    const FILES = 240;
    const svc = await startScriptedService();
    const { dir: root, client, journal } = scriptedWorld(svc, cleanups);
    const dirs = Object.fromEntries(['inbox', 'outbox', 'sent', 'error', 'state'].map((d) => [d, path.join(root, d)])) as Record<
      'inbox' | 'outbox' | 'sent' | 'error' | 'state',
      string
    >;
    for (const d of Object.values(dirs)) fs.mkdirSync(d);
    const wan = acrossWan(svc, { latencyMs: 40, watch: '/parcels/upload', overloadAbove: K, overloadStatus: 503 });
    for (let i = 0; i < FILES; i++) fs.writeFileSync(path.join(dirs.outbox, `po-${i}.x12`), x12(i));
    const past = new Date(Date.now() - 60_000);
    for (const f of listFiles(dirs.outbox)) fs.utimesSync(path.join(dirs.outbox, f), past, past);
    const p = outboundPipeline({ client, journal, dirs }, { gridIdFrom: 7001, gridIdTo: 7002 });
    await p.checkPrerequisites();
    // As `once` does: cycles until nothing is left (an upload answered 503 is reconciled next cycle).
    for (let cycle = 0; cycle < 30 && listFiles(dirs.sent).length < FILES; cycle++) await p.runCycle();
    expect(peakFrom(wan)).toBeGreaterThan(Math.max(K, 2 * OLD_FIXED_DEFAULT));
    const half = Math.floor(wan.inFlightAtArrival.length / 2);
    expect(refusedShareFrom(wan, half)).toBeLessThan(0.25);
    expect(listFiles(dirs.sent)).toHaveLength(FILES);
    expect(listFiles(dirs.error)).toEqual([]);
    const sent = svc.parcels.filter((x) => x.direction === 'out').map((x) => x.fileName);
    expect(sent).toHaveLength(FILES);
    expect(new Set(sent).size).toBe(FILES);
  }, 180_000);
});
