// Concurrency that fits the network, inbound: with the default `inbox.concurrency` (adaptive) the
// downloads in flight grow past the old fixed default of 4 while every call simply costs a round
// trip, and fall back when the service refuses what is beyond its capacity — every parcel placed
// and confirmed exactly once either way. Against a scripted service (not our emulator) across a
// simulated WAN (test/helpers/wan-service.ts). No timing is asserted: only what the service saw.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULTS } from '../../../src/config/defaults.js';
import { InboundPipeline } from '../../../src/inbound/index.js';
import { startScriptedService, type ScriptedService } from '../../helpers/scripted-service.js';
import { scriptedWorld } from '../../helpers/scripted-world.js';
import { acrossWan, peakFrom, refusedShareFrom } from '../../helpers/wan-service.js';
import { inboxConfig } from '../../helpers/world.js';

const OLD_FIXED_DEFAULT = 4;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function drain(svc: ScriptedService, parcels: number): Promise<{ inbox: string[] }> {
  const { dir, client, journal } = scriptedWorld(svc, cleanups);
  const inbox = path.join(dir, 'inbox');
  const p = new InboundPipeline({
    client,
    journal,
    mailbox: { mailboxId: 1001, name: 'mb1001', inbox: inboxConfig(inbox, { maxAttempts: DEFAULTS.inbox.maxAttempts }) },
    stateDir: path.join(dir, 'state'),
  });
  await p.checkPrerequisites();
  // As `once` does: cycles until nothing is left (a refused download waits for the next cycle).
  for (let cycle = 0; cycle < 20 && svc.confirmed().length < parcels; cycle++) await p.runCycle();
  return { inbox: fs.readdirSync(inbox).sort() };
}

function addParcels(svc: ScriptedService, n: number): string[] {
  const names = Array.from({ length: n }, (_, i) => `p${String(i).padStart(3, '0')}.x12`);
  for (const name of names) svc.addInbound(name, `ISA*${name}~`);
  return names;
}

describe('inbound: adaptive concurrency across a WAN', () => {
  it('grows the downloads in flight past the old fixed default while latency stays flat; each parcel once', async () => {
    const svc = await startScriptedService();
    const names = addParcels(svc, 160);
    const wan = acrossWan(svc, { latencyMs: 40, watch: '/parcels/download' });
    const { inbox } = await drain(svc, names.length);
    expect(peakFrom(wan)).toBeGreaterThan(2 * OLD_FIXED_DEFAULT);
    expect(inbox).toEqual(names);
    expect(svc.confirmed()).toHaveLength(names.length);
    expect(svc.requests.filter((r) => r.path.endsWith('/parcels/confirm'))).toHaveLength(names.length);
  }, 120_000);

  it('backs off when the service answers 429 beyond K downloads in flight: later in-flight stays near K; nothing lost or doubled', async () => {
    const K = 6;
    const svc = await startScriptedService();
    const names = addParcels(svc, 240);
    const wan = acrossWan(svc, { latencyMs: 40, watch: '/parcels/download', overloadAbove: K });
    const { inbox } = await drain(svc, names.length);
    // It did try beyond K (it adapts, it is not simply fixed low) …
    expect(peakFrom(wan)).toBeGreaterThan(K);
    // … and in the second half of the run it keeps to about K: few refusals, in flight near K.
    const half = Math.floor(wan.inFlightAtArrival.length / 2);
    expect(refusedShareFrom(wan, half)).toBeLessThan(0.25);
    const later = wan.inFlightAtArrival.slice(half).sort((a, b) => a - b);
    expect(later[Math.floor(later.length / 2)]).toBeLessThanOrEqual(K);
    expect(inbox).toEqual(names);
    expect(svc.confirmed()).toHaveLength(names.length);
  }, 120_000);
});
