// A local condition that stops deliveries (here: the inbox's sub-folder cannot be created, as with
// an unwritable inbox) used to be silent: every cycle downloaded the parcels into staging and
// deferred them with a warning while /readyz stayed 200, no failure was counted and the last-success
// time advanced. Now, after a few cycles: /readyz 503 with the reason, a metric, an error-level log
// line; and everything moves again once the condition is gone.
//
// Root ignores directory modes, so the condition is made with a file standing where the inbox's
// template sub-folder must go (mkdir fails with EEXIST/ENOTDIR whoever runs the test).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/index.js';
import { Daemon } from '../../../src/daemon/index.js';
import type { Timers } from '../../../src/daemon/scheduler.js';
import { startEmulator } from '@gridsync/emulator';
import { eventually } from '../../helpers/daemon-child.js';
import { recorder } from '../../helpers/log-recorder.js';

const fastTimers: Timers = { set: (fn, ms) => setTimeout(fn, ms / 10), clear: (h) => clearTimeout(h as NodeJS.Timeout) };

describe('daemon: deliveries that stop are loud', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('inbox cannot take files: /readyz 503 with the reason, gridsync_deliveries_stuck 1, an error line; recovers by itself', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-stuck-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const emu = await startEmulator({ port: 0 });
    cleanups.push(() => emu.close());
    const inbox = path.join(dir, 'inbox');
    fs.mkdirSync(inbox);
    fs.writeFileSync(path.join(inbox, 'orders'), 'not a folder');
    const loaded = parseConfig(
      {
        api: { baseUrl: emu.url, apiKey: 'demo-key-1001' },
        stateDir: 'state',
        http: { enabled: true, port: 0 },
        schedule: { poll: '100ms' },
        mailboxes: [{ mailboxId: 1001, inbox: { dir: 'inbox', nameTemplate: 'orders/{fileName}' } }],
      },
      'stuck-test',
      {},
      dir,
    );
    const log = recorder();
    const daemon = await Daemon.open({ loaded, logger: log, waitForService: true, serveHttp: true, timers: fastTimers });
    cleanups.push(() => daemon.close());
    await emu.inject({ mailboxId: 1001, fileName: 'a.x12', content: Buffer.from('ISA*a~') });
    await emu.inject({ mailboxId: 1001, fileName: 'b.x12', content: Buffer.from('ISA*b~') });
    await daemon.start();
    const url = daemon.httpUrl as string;

    const body = await eventually(
      async () => {
        const r = await fetch(`${url}/readyz`);
        const b = (await r.json()) as {
          ready: boolean;
          lastError: string | null;
          stuck: { mailbox: string; direction: string; waiting: number; reason: string }[];
        };
        return r.status === 503 && b.stuck.length > 0 ? b : undefined;
      },
      15_000,
      '/readyz 503 with the stuck direction',
    );
    expect(body.stuck[0]).toMatchObject({ mailbox: 'mb1001', direction: 'in', waiting: 2 });
    expect(body.stuck[0]?.reason).toMatch(/orders/);
    expect(body.lastError).toMatch(/mb1001 inbound: 2 item\(s\) waiting, nothing delivered for \d+ cycles/);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/gridsync_deliveries_stuck\{direction="in",mailbox="mb1001"\} 1/);
    expect(metrics).toMatch(/gridsync_deferred_total\{direction="in",mailbox="mb1001"\} [1-9]/);
    const errors = log.lines.filter((l) => l.level === 'error' && /deliveries stopped/.test(l.msg));
    expect(errors).toHaveLength(1); // once, at the transition — not every cycle
    expect(errors[0]?.obj).toMatchObject({ mailbox: 'mb1001', direction: 'in' });
    // Nothing was confirmed on the service: both parcels still wait there.
    expect(emu.requests().some((r) => /confirm|receive/i.test(r.path) && r.method !== 'GET' && r.status < 300)).toBe(false);

    fs.rmSync(path.join(inbox, 'orders'));
    await eventually(
      () => fs.existsSync(path.join(inbox, 'orders', 'a.x12')) && fs.existsSync(path.join(inbox, 'orders', 'b.x12')),
      15_000,
      'delivered once the folder can be made',
    );
    await eventually(async () => (await fetch(`${url}/readyz`)).status === 200, 15_000, 'ready again');
    expect(await (await fetch(`${url}/metrics`)).text()).toMatch(/gridsync_deliveries_stuck\{direction="in",mailbox="mb1001"\} 0/);
    expect(log.lines.some((l) => l.level === 'info' && /deliveries moving again/.test(l.msg))).toBe(true);
  });
});
