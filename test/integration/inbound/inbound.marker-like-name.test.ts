// With `doneMarker: true` the ERP takes a file once `<file><doneSuffix>` is there, and usually
// removes that marker with it. A partner's parcel named like a marker (`orders.edi.done`) was placed
// under that name: next to `orders.edi` it was the marker of another parcel — the marker step found
// a file of ours under the marker's name and took it for its own, so the ERP would remove the
// parcel as that file's marker — and alone it announced a file that does not exist. A parcel's name
// now never ends with the done suffix. The built CLI against the emulator.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '@gridsync/emulator';
import { onceChild } from '../../helpers/daemon-child.js';
import { makeDaemonWorld, type DaemonWorld } from '../../helpers/daemon-config.js';
import { emulatorParcels, listFiles } from '../../helpers/world.js';

let emu: Emulator;
let w: DaemonWorld | undefined;
beforeEach(async () => {
  emu = await startEmulator({ port: 0 });
});
afterEach(async () => {
  await emu.close();
  w?.cleanup();
  w = undefined;
});

describe('a parcel named like a done marker', () => {
  it('is placed under a name no ERP takes for a marker; every marker is empty and names a parcel beside it', async () => {
    const contents = ['ISA*orders~', 'ISA*named-like-a-marker~', 'ISA*marker-of-nothing~'];
    await emu.inject({ mailboxId: 1001, fileName: 'orders.edi', content: Buffer.from(contents[0] as string) });
    await emu.inject({ mailboxId: 1001, fileName: 'orders.edi.done', content: Buffer.from(contents[1] as string) });
    await emu.inject({ mailboxId: 1001, fileName: 'invoice.x12.done', content: Buffer.from(contents[2] as string) });
    w = makeDaemonWorld(
      { api: { baseUrl: emu.url, apiKey: 'demo-key-1001' } },
      { inbox: { dir: './inbox', doneMarker: true }, outbox: undefined },
    );
    const r = await onceChild(w.configFile);
    expect(r.code, r.stderr).toBe(0);
    const { inbox } = w;
    const files = listFiles(inbox);
    const markers = files.filter((f) => f.endsWith('.done'));
    const parcels = files.filter((f) => !f.endsWith('.done'));
    for (const m of markers) {
      expect(fs.readFileSync(path.join(inbox, m), 'utf8'), `${m} is a marker`).toBe('');
      expect(parcels, `${m} names a parcel beside it`).toContain(m.slice(0, -'.done'.length));
    }
    expect(parcels.map((f) => fs.readFileSync(path.join(inbox, f), 'utf8')).sort()).toEqual([...contents].sort());
    expect(markers.sort()).toEqual(parcels.map((f) => `${f}.done`).sort());
    expect((await emulatorParcels(emu, 1001)).map((p) => p.status)).toEqual(['InBoxTransferred', 'InBoxTransferred', 'InBoxTransferred']);
  });
});
