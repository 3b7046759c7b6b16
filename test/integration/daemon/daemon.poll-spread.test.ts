// Many mailboxes in one process: a scheduled cycle spreads the mailboxes' list calls over the
// poll interval instead of sending them to the service in one burst, and every mailbox is still
// polled each cycle.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/index.js';
import { Daemon } from '../../../src/daemon/index.js';
import { startEmulator } from '@gridsync/emulator';
import { defaultSeed } from '../../../packages/emulator/src/seed.js';
import { silentLogger } from '../../../src/log.js';
import { eventually } from '../../helpers/daemon-child.js';

const COUNT = 4;
const POLL_MS = 4000;

describe('daemon: polls of many mailboxes are spread', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('the first cycle lists each mailbox once, spaced over the interval rather than all at once', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-spread-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const seed = defaultSeed();
    const ids = Array.from({ length: COUNT }, (_, i) => 2001 + i);
    for (const id of ids) seed.mailboxes.push({ mailboxId: id, networkId: 1, uniqueId: `MB${id}`, companyName: `Mailbox ${id}` });
    const emu = await startEmulator({ port: 0, seed });
    cleanups.push(() => emu.close());
    const loaded = parseConfig(
      {
        // The network admin acts for every mailbox of the network.
        api: { baseUrl: emu.url, apiKey: 'demo-key-admin' },
        stateDir: 'state',
        schedule: { poll: `${POLL_MS}ms` },
        mailboxes: ids.map((id) => ({ mailboxId: id, name: `mb${id}`, inbox: { dir: `in/${id}` } })),
      },
      'spread-test',
      {},
      dir,
    );
    const daemon = await Daemon.open({ loaded, logger: silentLogger, waitForService: true });
    cleanups.push(() => daemon.close());
    const lists = () => emu.requests().filter((r) => r.endpoint === 'parcels.pendingInboxList');
    // Opening the daemon checked each mailbox already: the cycle's own calls come after those.
    const before = lists().length;
    await daemon.start();
    await eventually(() => lists().length >= before + COUNT, 20_000, 'every mailbox listed');
    const times = lists()
      .slice(before, before + COUNT)
      .map((r) => Date.parse(r.at));
    const gaps = times.slice(1).map((t, i) => t - (times[i] as number));
    // Spread: no two polls of the cycle in the same instant. In one burst they would follow each
    // other within a few milliseconds; spread, they are a fraction of the interval apart.
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(POLL_MS / (4 * COUNT));
  }, 30_000);
});
