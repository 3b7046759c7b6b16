// Operators, round 5: `gridsync redeliver` reset any parcel id the account could see. A key that
// sees two mailboxes (a network admin's) and a configuration that receives for one of them: a
// typo naming a parcel of the other mailbox, which another system consumes, delivered that
// system's parcel again. The parcel is now looked up first; one in another mailbox's inbox stops
// the command, naming it and its mailbox, exit 2, nothing noted and nothing reset. The built CLI
// against the emulator, over REST and SOAP.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '@gridsync/emulator';
import { openJournal, REDELIVERY_REQUESTED } from '../../../src/journal/index.js';
import { startCli } from '../../helpers/daemon-child.js';
import { emulatorParcels } from '../../helpers/world.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A parcel in `mailboxId`'s inbox, confirmed by whoever takes that mailbox's parcels (its own key). */
async function confirmedParcel(emu: Emulator, mailboxId: number, key: string): Promise<number> {
  const id = await emu.inject({ mailboxId, fileName: `po-${mailboxId}.x12`, content: Buffer.from('ISA*po~') });
  const res = await fetch(`${emu.url}/v2/parcels/confirm`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ parcelId: id }),
  });
  expect(res.status).toBe(200);
  return id;
}

const statusOf = async (emu: Emulator, mailboxId: number, id: number): Promise<unknown> =>
  (await emulatorParcels(emu, mailboxId)).find((p) => p.parcelId === id)?.status;

describe.each(['rest', 'soap'])('redeliver over %s with a key that sees two mailboxes', (protocol) => {
  it("a parcel of the other mailbox is refused, named with its mailbox: exit 2, nothing noted, nothing reset; the configuration's own is reset", async () => {
    const emu = await startEmulator({});
    cleanups.push(() => emu.close());
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-redeliver-other-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const config = path.join(dir, 'gridsync.yaml');
    fs.writeFileSync(
      config,
      YAML.stringify({
        api: { baseUrl: emu.url, apiKey: 'demo-key-admin', protocol },
        stateDir: path.join(dir, 'state'),
        log: { level: 'warn', pretty: false },
        mailboxes: [{ mailboxId: 1001, inbox: { dir: path.join(dir, 'inbox') } }],
      }),
      { mode: 0o600 },
    );
    const ours = await confirmedParcel(emu, 1001, 'demo-key-1001');
    const theirs = await confirmedParcel(emu, 1002, 'demo-key-1002');
    const before = await statusOf(emu, 1002, theirs);
    expect(before).not.toBe('InBoxReady');

    const refused = await startCli(['redeliver', '-c', config, String(ours), String(theirs)]).exited;
    expect(refused.code, refused.stdout + refused.stderr).toBe(2);
    expect(refused.stderr).toContain(`parcel ${theirs} is in the inbox of mailbox 1002`);
    expect(refused.stderr).toMatch(/\(1001\): nothing was reset \[REDELIVER_OTHER_MAILBOX\]/);
    expect(refused.stderr).not.toMatch(/at .*\.js:\d+/);
    expect(await statusOf(emu, 1002, theirs)).toBe(before);
    expect(await statusOf(emu, 1001, ours), 'nothing reset: not the good id given beside it either').not.toBe('InBoxReady');
    const journal = await openJournal({ url: undefined, stateDir: path.join(dir, 'state') }, { readonly: true });
    try {
      expect(await journal.all('SELECT 1 FROM events WHERE to_state = ?', REDELIVERY_REQUESTED)).toHaveLength(0);
    } finally {
      await journal.close();
    }

    const own = await startCli(['redeliver', '-c', config, String(ours)]).exited;
    expect(own.code, own.stdout + own.stderr).toBe(0);
    expect(await statusOf(emu, 1001, ours)).toBe('InBoxReady');
  });
});
