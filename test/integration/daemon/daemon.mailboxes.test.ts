// Several mailboxes in one process, each with its own folders and name, counted apart in /metrics;
// and `once` (runOnce) drains both directions of every mailbox and records the cycle.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/index.js';
import { Daemon } from '../../../src/daemon/index.js';
import { startEmulator } from '@gridsync/emulator';
import { silentLogger } from '../../../src/log.js';
import { eventually } from '../../helpers/daemon-child.js';
import { x12 } from '../../helpers/edi.js';

describe('daemon: several mailboxes', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function setup() {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-mailboxes-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const emu = await startEmulator({ port: 0 });
    cleanups.push(() => emu.close());
    const loaded = parseConfig(
      {
        // The network admin may act for both mailboxes of the demo network.
        api: { baseUrl: emu.url, apiKey: 'demo-key-admin' },
        stateDir: 'state',
        http: { enabled: true, port: 0 },
        schedule: { poll: '100ms' },
        mailboxes: [
          {
            mailboxId: 1001,
            name: 'ours',
            inbox: { dir: 'ours/in' },
            outbox: { dir: 'ours/out', sentDir: 'ours/sent', errorDir: 'ours/err', stableMs: '50ms', rescanMs: '200ms' },
          },
          { mailboxId: 1002, name: 'partner', inbox: { dir: 'partner/in' } },
        ],
      },
      'mailboxes-test',
      {},
      dir,
    );
    const files = (p: string): string[] =>
      fs.existsSync(path.join(dir, p))
        ? fs
            .readdirSync(path.join(dir, p))
            .filter((f) => !f.startsWith('.'))
            .sort()
        : [];
    return { dir, emu, loaded, files };
  }

  it('run: each mailbox delivers into its own inbox; metrics per mailbox', async () => {
    const w = await setup();
    const daemon = await Daemon.open({ loaded: w.loaded, logger: silentLogger, waitForService: true, serveHttp: true });
    cleanups.push(() => daemon.close());
    await daemon.start();
    await w.emu.inject({ mailboxId: 1001, fileName: 'to-ours.x12', content: Buffer.from('ISA*ours~') });
    await w.emu.inject({ mailboxId: 1002, fileName: 'to-partner.x12', content: Buffer.from('ISA*partner~') });
    await eventually(() => w.files('ours/in').length === 1 && w.files('partner/in').length === 1, 10_000, 'both inboxes');
    expect(w.files('ours/in')).toEqual(['to-ours.x12']);
    expect(w.files('partner/in')).toEqual(['to-partner.x12']);
    // The file appears before its cycle ends and counts it: wait for the count, not just the file.
    const metrics = await eventually(
      async () => {
        const m = await (await fetch(`${daemon.httpUrl as string}/metrics`)).text();
        const counted = ['ours', 'partner'].every((name) => m.includes(`gridsync_transfers_total{direction="in",mailbox="${name}"} 1`));
        return counted ? m : undefined;
      },
      10_000,
      'both transfers counted',
    );
    expect(metrics).toContain('gridsync_transfers_total{direction="in",mailbox="ours"} 1');
    expect(metrics).toContain('gridsync_transfers_total{direction="in",mailbox="partner"} 1');
  });

  it('once: both directions of every mailbox, then the totals', async () => {
    const w = await setup();
    fs.mkdirSync(path.join(w.dir, 'ours/out'), { recursive: true });
    fs.writeFileSync(path.join(w.dir, 'ours/out/inv.x12'), x12(31));
    await w.emu.inject({ mailboxId: 1002, fileName: 'p.x12', content: Buffer.from('ISA*p~') });
    const daemon = await Daemon.open({ loaded: w.loaded, logger: silentLogger, waitForService: false });
    cleanups.push(() => daemon.close());
    const { totals } = await daemon.runOnce();
    expect(totals.outbound.archived).toBe(1);
    expect(totals.inbound.confirmed).toBeGreaterThanOrEqual(1);
    expect(w.files('ours/sent')).toEqual(['inv.x12']);
    expect(w.files('partner/in')).toContain('p.x12');
    // Where each mailbox and direction ended, as the progress lines and the summary table show it.
    const rows = daemon.progressRows();
    expect(rows.map((r) => [r.mailbox, r.direction])).toEqual([
      ['ours', 'in'],
      ['ours', 'out'],
      ['partner', 'in'],
    ]);
    expect(rows[1]).toMatchObject({ done: 1, total: 1, failed: 0 });
    expect(rows[1]?.bytes).toBeGreaterThan(0);
    // The partner gets p.x12 and, depending on timing, the demo partner's acknowledgment too.
    expect(rows[2]?.done).toBe(totals.inbound.confirmed - (rows[0]?.done ?? 0));
    expect(rows[2]?.done).toBe(rows[2]?.total);
    expect(rows[2]?.done).toBeGreaterThanOrEqual(1);
  });
});
