// /readyz must not follow steps of the wall clock. How long ago the last cycle succeeded was
// measured on it: a clock stepped forward by more than three poll intervals made a sound daemon
// answer 503 until its next cycle (with `poll: 1h`, for up to an hour), and one stepped back kept
// a daemon whose cycles had stalled ready for the length of the step.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/index.js';
import { Daemon } from '../../../src/daemon/index.js';
import { startEmulator } from '@gridsync/emulator';
import { eventually } from '../../helpers/daemon-child.js';
import { stillTimers } from '../../helpers/first-cycle-daemon.js';
import { recorder } from '../../helpers/log-recorder.js';

describe('daemon readiness across wall-clock steps', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('stays ready when the wall clock is stepped forward past the freshness window', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-ready-clock-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const emu = await startEmulator({ port: 0 });
    cleanups.push(() => emu.close());
    fs.mkdirSync(path.join(dir, 'inbox'));
    const loaded = parseConfig(
      {
        api: { baseUrl: emu.url, apiKey: 'demo-key-1001' },
        stateDir: 'state',
        schedule: { poll: '1h' },
        mailboxes: [{ mailboxId: 1001, inbox: { dir: 'inbox' } }],
      },
      'readiness-clock-test',
      {},
      dir,
    );
    let stepMs = 0;
    const daemon = await Daemon.open({
      loaded,
      logger: recorder(),
      waitForService: true,
      timers: stillTimers,
      now: () => Date.now() + stepMs,
    });
    cleanups.push(() => daemon.close());
    await daemon.start();
    const first = await eventually(
      async () => (daemon.readiness().ready ? daemon.readiness() : undefined),
      10_000,
      'ready after the first cycle',
    );

    stepMs = 4 * 3_600_000; // beyond three poll intervals
    const after = daemon.readiness();
    expect(after.ready).toBe(true);
    expect(after.lastSuccessAt).toBe(first.lastSuccessAt);
  });
});
