// /readyz during a cycle longer than its freshness window (three poll intervals, at least a
// minute). A month-end backlog across a WAN is one such cycle: until it ended, /readyz answered
// 503 while parcels arrived at full speed — a page at the busiest hour, for nothing. A cycle that
// moves items is busy, not stalled; one that stops moving turns unready as before.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmulator } from '@gridsync/emulator';
import { eventually } from '../../helpers/daemon-child.js';
import { firstCycleDaemon } from '../../helpers/first-cycle-daemon.js';

const PARCELS = 60;
/** Past the freshness window of `poll: 1s` (one minute). */
const PAST_WINDOW = 61_000;

describe('daemon readiness during a long cycle', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('stays ready while the cycle delivers past the window, and turns unready once it stops moving', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-ready-long-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const emu = await startEmulator({ port: 0 });
    cleanups.push(() => emu.close());
    for (let i = 0; i < PARCELS; i++) {
      await emu.inject({ mailboxId: 1001, fileName: `order-${i}.x12`, content: Buffer.from(`ISA*${i}~`) });
    }
    // Each download answers late, as across a WAN: the cycle lasts seconds, one parcel at a time.
    emu.setFaults({ rules: [{ endpoint: 'parcels.download', latencyMs: 40 }] });
    const inbox = path.join(dir, 'inbox');
    fs.mkdirSync(inbox);
    const { daemon, advance } = await firstCycleDaemon(dir, {
      api: { baseUrl: emu.url, apiKey: 'demo-key-1001' },
      mailboxes: [{ mailboxId: 1001, inbox: { dir: 'inbox', concurrency: 1 } }],
    });
    cleanups.push(() => daemon.close());
    const delivered = (): number => fs.readdirSync(inbox).length;
    await daemon.start();
    await eventually(async () => delivered() >= 5 || undefined, 20_000, 'the first parcels delivered');

    // The window passes while the cycle goes on delivering.
    advance(PAST_WINDOW);
    const before = delivered();
    await eventually(async () => delivered() >= before + 3 || undefined, 20_000, 'more parcels after the window passed');
    const busy = daemon.readiness();
    expect(delivered()).toBeLessThan(PARCELS); // the same, first cycle: it has not ended
    expect(busy.lastSuccessAt).toBeNull();
    expect(busy.lastMovedAt).not.toBeNull();
    expect(busy.ready).toBe(true);

    // Now the service stops answering downloads: the cycle runs on, moving nothing.
    emu.setFaults({ rules: [{ endpoint: 'parcels.download', latencyMs: 600_000 }] });
    let seen = delivered();
    await eventually(
      async () => {
        await new Promise((r) => setTimeout(r, 300));
        const now = delivered();
        const still = now === seen;
        seen = now;
        return still || undefined;
      },
      20_000,
      'deliveries to stop',
    );
    expect(daemon.readiness().ready).toBe(true); // within the window of its last step
    advance(PAST_WINDOW);
    const stalled = daemon.readiness();
    expect(delivered()).toBeLessThan(PARCELS);
    expect(stalled.ready).toBe(false);
    expect(stalled.lastSuccessAt).toBeNull();
  });
});
