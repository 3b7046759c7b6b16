// Operators, round 6: `gridsync redeliver ID` looks each parcel up to see whose it is before
// anything is noted or reset. A record that named no mailbox (`mailboxId` missing: a proxy or a
// service version that leaves it out) was taken as ours, and the parcel was reset: whichever
// system takes its real mailbox's parcels was delivered it again. Now it is a parcel whose owner
// cannot be told, as one that cannot be looked up: not noted, not reset, exit 1; the other ids
// given go on. The built CLI against a scripted REST service (not our emulator).
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { openJournal } from '../../../src/journal/index.js';
import { startCli } from '../../helpers/daemon-child.js';
import { makeDaemonWorld } from '../../helpers/daemon-config.js';
import { startScriptedService, type ScriptedService } from '../../helpers/scripted-service.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The parcels the service was asked to reset (either path form of the endpoint). */
const resets = (svc: ScriptedService): string[] =>
  svc.requests.flatMap((r) => {
    const m = /^\/v2\/parcels\/(?:reset-to-inbox\/(\d+)|(\d+)\/reset-to-inbox)$/.exec(r.path);
    return r.method === 'POST' && m ? [(m[1] ?? m[2]) as string] : [];
  });

describe('redeliver a parcel whose record names no mailbox', () => {
  it('is not noted or reset (exit 1); a parcel of the mailbox given with it is', async () => {
    const svc = await startScriptedService({ apiKey: 'redeliver-key-4Lw9' });
    cleanups.push(() => svc.close());
    const ours = svc.addInbound('ours.x12', 'ISA*00*ours~', { status: 'InBoxConfirmed' });
    const unnamed = svc.addInbound('unnamed.x12', 'ISA*00*unnamed~', { status: 'InBoxConfirmed' });
    svc.variants.record = (r, p) => {
      if (p.parcelId !== unnamed.parcelId) return r;
      const { mailboxId: _dropped, ...rest } = r;
      return rest;
    };
    // The scripted service has no reset of its own: it answers every reset as the service does.
    svc.variants.fault = (req, res) => {
      if (!/reset-to-inbox/.test(req.path)) return false;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ success: true, data: true, errorCode: '', message: '' }));
      return true;
    };
    const w = makeDaemonWorld({ api: { baseUrl: svc.url, apiKey: svc.apiKey } }, { outbox: undefined });
    cleanups.push(() => w.cleanup());
    fs.chmodSync(w.configFile, 0o600);

    // A child of its own, not spawnSync: the scripted service answers from this process.
    const r = await startCli(['redeliver', '-c', w.configFile, String(unnamed.parcelId), String(ours.parcelId)], {}, w.dir).exited;
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^parcel ${unnamed.parcelId}: not reset — [^\\n]*mailbox`, 'm'));
    expect(r.stderr).not.toMatch(/\bat \S+ \(/); // no stack trace
    expect(resets(svc)).toEqual([String(ours.parcelId)]);
    expect(r.stdout).toMatch(new RegExp(`parcel ${ours.parcelId}: reset on the service`));

    // Nothing noted for it either: a note would make a later listing of it a redelivery.
    const journal = await openJournal({ url: undefined, stateDir: w.state }, { readonly: true });
    try {
      const noted = await journal.all<{ item: string }>("SELECT item FROM events WHERE to_state = 'redelivery-requested'");
      expect(noted.map((e) => e.item)).toEqual([String(ours.parcelId)]);
    } finally {
      await journal.close();
    }
  });
});
