// Issue 24 attack 4: the inbox cannot be used, so a parcel is staged and its placement deferred;
// meanwhile someone removes the staging file (a tmp cleaner, an operator); the inbox comes back.
// The missing staging file once read as "renamed before a crash": the parcel was confirmed and
// the inbox stayed empty. A parcel is confirmed only when its file is verifiably in the inbox.
//
// Root ignores directory modes, so the inbox is made unusable by standing a file where its folder
// must be (the placement then fails whoever runs the test).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InboundPipeline } from '../../../src/inbound/index.js';
import { emulatorParcels, inboxConfig, listFiles, makeWorld, type Protocol, type TestWorld } from '../../helpers/world.js';

const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

let w: TestWorld;

describe.each(['rest', 'soap'] as Protocol[])('a staged file removed while its placement waits, over %s', (protocol) => {
  beforeEach(async () => {
    w = await makeWorld({}, 'demo-key-1001', protocol);
  });
  afterEach(async () => w.close());

  const pipeline = (): InboundPipeline =>
    new InboundPipeline({
      client: w.client,
      journal: w.journal,
      mailbox: { mailboxId: 1001, name: 'mb1001', inbox: inboxConfig(w.dirs.inbox) },
      stateDir: w.dirs.state,
    });
  const status = async (id: number): Promise<unknown> => (await emulatorParcels(w.emu, 1001)).find((x) => x.parcelId === id)?.status;

  it('is downloaded again, never confirmed with an empty inbox', async () => {
    const content = Buffer.from("UNA:+.? 'UNB+UNOC:3+SENDER+US+260507:0800+1'");
    const id = await w.emu.inject({ mailboxId: 1001, fileName: 'orders.edi', content });
    const p = pipeline();
    await p.checkPrerequisites();

    fs.rmSync(w.dirs.inbox, { recursive: true });
    fs.writeFileSync(w.dirs.inbox, 'not a folder');
    const held = await p.runCycle();
    expect(held).toMatchObject({ placed: 0, confirmed: 0, deferred: 1 });
    const staging = path.join(w.dirs.state, 'staging');
    const parts = listFiles(staging);
    expect(parts).toHaveLength(1);

    fs.rmSync(path.join(staging, parts[0] as string));
    fs.rmSync(w.dirs.inbox);
    fs.mkdirSync(w.dirs.inbox);

    for (let cycle = 0; cycle < 3 && (await status(id)) === 'InBoxReady'; cycle++) {
      await p.runCycle();
      // Whatever the cycle did: confirmed only with the file in the inbox.
      if ((await status(id)) !== 'InBoxReady') expect(listFiles(w.dirs.inbox)).toEqual(['orders.edi']);
    }
    expect(await status(id)).toBe('InBoxTransferred');
    expect(listFiles(w.dirs.inbox)).toEqual(['orders.edi']);
    expect(sha(fs.readFileSync(path.join(w.dirs.inbox, 'orders.edi')))).toBe(sha(content));
    expect(listFiles(staging)).toEqual([]);
  });

  it('a final file with other content under the journalled name does not count as placed', async () => {
    const content = Buffer.from('ISA*00*real~');
    const id = await w.emu.inject({ mailboxId: 1001, fileName: 'real.x12', content });
    const p = pipeline();
    await p.checkPrerequisites();
    fs.rmSync(w.dirs.inbox, { recursive: true });
    fs.writeFileSync(w.dirs.inbox, 'not a folder');
    await p.runCycle();
    const staging = path.join(w.dirs.state, 'staging');
    for (const f of listFiles(staging)) fs.rmSync(path.join(staging, f));
    fs.rmSync(w.dirs.inbox);
    fs.mkdirSync(w.dirs.inbox);
    // Same name, same size, other bytes: only the content hash tells them apart.
    fs.writeFileSync(path.join(w.dirs.inbox, 'real.x12'), 'ISA*00*fake~');

    for (let cycle = 0; cycle < 3 && (await status(id)) === 'InBoxReady'; cycle++) await p.runCycle();
    expect(await status(id)).toBe('InBoxTransferred');
    const delivered = listFiles(w.dirs.inbox).map((f) => sha(fs.readFileSync(path.join(w.dirs.inbox, f))));
    expect(delivered).toContain(sha(content));
  });
});
