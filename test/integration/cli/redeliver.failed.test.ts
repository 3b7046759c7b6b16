// A parcel given up on after maxAttempts (its downloads never verified) stays pending on the
// service, and its journal row keeps it from being fetched again. Once the cause is fixed, the
// operator asks for it with `gridsync redeliver ID`. Before, nothing acted on that request for a
// failed row: the listing skipped the parcel for good, and the only way on was editing the journal.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '@gridsync/emulator';
import { openJournal } from '../../../src/journal/index.js';
import { startCli } from '../../helpers/daemon-child.js';
import { x12 } from '../../helpers/edi.js';
import { emulatorParcels } from '../../helpers/world.js';

const MB = 1001;
let emu: Emulator | undefined;
let dir: string | undefined;

afterEach(async () => {
  await emu?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  emu = undefined;
  dir = undefined;
});

describe('redeliver a parcel that failed', () => {
  it('is tried anew, from the download, once the operator asks for it', async () => {
    const service = (emu = await startEmulator({ settings: { acknowledgeDelayMs: 0 } }));
    const root = (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-redeliver-failed-')));
    const config = path.join(root, 'gridsync.yaml');
    const inbox = path.join(root, 'inbox');
    fs.writeFileSync(
      config,
      YAML.stringify({
        api: { baseUrl: service.url, apiKey: 'demo-key-1001' },
        stateDir: path.join(root, 'state'),
        log: { level: 'warn', pretty: false },
        mailboxes: [{ mailboxId: MB, inbox: { dir: inbox, maxAttempts: 2 } }],
      }),
    );
    const cli = (args: string[]) => startCli([...args, '-c', config]).exited;
    const stateOf = async (): Promise<unknown> => {
      if (!fs.existsSync(path.join(root, 'state'))) return undefined;
      const journal = await openJournal({ url: undefined, stateDir: path.join(root, 'state') }, { readonly: true });
      try {
        return (await journal.get<{ state: string }>('SELECT state FROM inbound_parcels WHERE parcel_id = ?', id))?.state;
      } finally {
        await journal.close();
      }
    };
    const content = x12(91);
    const id = await service.inject({ mailboxId: MB, fileName: 'po.x12', content: Buffer.from(content) });

    // Every download announces a byte more than it holds: it never verifies.
    service.setFaults({ rules: [{ endpoint: 'parcels.download', wrongBytesRate: 1 }] });
    for (let run = 0; run < 4 && (await stateOf()) !== 'failed'; run++) await cli(['once']);
    expect(await stateOf()).toBe('failed');

    // Fixed on the service's side; on its own the parcel is not fetched again.
    service.setFaults({ rules: [] });
    await cli(['once']);
    expect(await stateOf()).toBe('failed');
    expect(fs.readdirSync(inbox)).toEqual([]);

    const asked = await cli(['redeliver', String(id)]);
    expect(asked.stderr).not.toMatch(/at .*\.js:\d+/);
    expect(asked.code).toBe(0);
    const again = await cli(['once']);
    expect(again.code).toBe(0);
    const arrived = fs.readdirSync(inbox);
    expect(arrived).toHaveLength(1);
    expect(fs.readFileSync(path.join(inbox, arrived[0] as string), 'utf8')).toBe(content);
    expect(await stateOf()).toBe('confirmed');
    expect((await emulatorParcels(service, MB)).find((p) => p.parcelId === id)?.status).toBe('InBoxTransferred');
  });
});
