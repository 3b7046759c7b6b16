// Parcels gridsync gave up on (failed after maxAttempts) stay ready on the service, and the
// pending list shows them first, oldest first. With as many of them as api.limits.maxListEntries,
// the list cut at that limit held nothing else: every parcel that came after them was never seen
// — the inbox stayed empty for good while the log promised "the rest is taken in later cycles".
// The list now keeps room for the parcels given up on (REST and SOAP alike).
import { afterEach, describe, expect, it } from 'vitest';
import { GridClient, type MailboxTransport } from '../../../src/api/index.js';
import { SoapClient } from '../../../src/api/soap/client.js';
import { InboundPipeline } from '../../../src/inbound/index.js';
import { recorder } from '../../helpers/log-recorder.js';
import { emulatorParcels, inboxConfig, listFiles, makeWorld, type Protocol, type TestWorld } from '../../helpers/world.js';

const CAP = 3;
let w: TestWorld | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

describe.each<Protocol>(['rest', 'soap'])('parcels given up on at the head of a cut pending list (%s)', (protocol) => {
  it('newer parcels behind them are still delivered', async () => {
    const world = (w = await makeWorld({}, 'demo-key-1001', protocol));
    const options = { auth: { apiKey: 'demo-key-1001' }, sleep: async () => undefined, limits: { maxListEntries: CAP } };
    const client: MailboxTransport =
      protocol === 'soap' ? new SoapClient({ url: world.emu.url, ...options }) : new GridClient({ baseUrl: world.emu.url, ...options });
    const logger = recorder();
    const p = new InboundPipeline({
      client,
      journal: world.journal,
      mailbox: { mailboxId: 1001, name: 'mb1001', inbox: inboxConfig(world.dirs.inbox, { maxAttempts: 1 }) },
      stateDir: world.dirs.state,
      logger,
    });
    await p.checkPrerequisites();

    // CAP parcels whose downloads never verify: each is given up on at its first attempt.
    world.emu.setFaults({ rules: [{ endpoint: 'parcels.download', wrongBytesRate: 1 }] });
    for (let k = 0; k < CAP; k++) await world.emu.inject({ mailboxId: 1001, fileName: `bad-${k}.edi`, content: Buffer.from(`bad ${k}`) });
    await p.runCycle();
    const states = world.journal.db.prepare('SELECT state FROM inbound_parcels').all() as { state: string }[];
    expect(states.map((r) => r.state)).toEqual(Array(CAP).fill('failed'));

    // The fault is gone; newer parcels arrive behind the ones given up on, more than the limit.
    world.emu.setFaults({ rules: [] });
    const good = Array.from({ length: CAP + 2 }, (_, k) => `good-${k}.edi`);
    for (const name of good) await world.emu.inject({ mailboxId: 1001, fileName: name, content: Buffer.from(name) });
    for (let cycle = 0; cycle < 4 && listFiles(world.dirs.inbox).length < good.length; cycle++) await p.runCycle();

    expect(listFiles(world.dirs.inbox)).toEqual(good);
    const ready = (await emulatorParcels(world.emu, 1001)).filter((x) => x.status === 'InBoxReady').map((x) => x.fileName);
    expect(ready.sort()).toEqual(Array.from({ length: CAP }, (_, k) => `bad-${k}.edi`));
    // The given-up parcels never filled what was kept: no error about newer parcels hidden.
    expect(logger.lines.filter((l) => /may not be seen/.test(String(l.msg)))).toEqual([]);
  });
});
