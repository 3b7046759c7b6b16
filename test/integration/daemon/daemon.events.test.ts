// The pipelines report what they do as typed events; metrics, the stuck watch and the cycle record
// subscribe. In `run` with continuous outbound the outbox is sent between cycles: the cycle record
// used to miss that work (lastCycle said 0 sent while files went out).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/index.js';
import { Daemon } from '../../../src/daemon/index.js';
import { startEmulator } from '@gridsync/emulator';
import type { PipelineEvents } from '../../../src/events/index.js';
import { Journal } from '../../../src/journal/index.js';
import { silentLogger } from '../../../src/log.js';
import { eventually } from '../../helpers/daemon-child.js';
import { x12 } from '../../helpers/edi.js';

describe('daemon: typed pipeline events', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function setup(outbound: 'continuous' | 'windows' = 'continuous') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-events-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const emu = await startEmulator({ port: 0 });
    cleanups.push(() => emu.close());
    const loaded = parseConfig(
      {
        api: { baseUrl: emu.url, apiKey: 'demo-key-1001' },
        stateDir: 'state',
        http: { enabled: true, port: 0 },
        schedule: { poll: '150ms', outbound },
        mailboxes: [
          {
            mailboxId: 1001,
            name: 'ours',
            inbox: { dir: 'in' },
            outbox: { dir: 'out', sentDir: 'sent', errorDir: 'err', stableMs: '50ms', rescanMs: '200ms' },
          },
        ],
      },
      'events-test',
      {},
      dir,
    );
    fs.mkdirSync(path.join(dir, 'out'), { recursive: true });
    return { dir, emu, loaded };
  }

  function record(daemon: Daemon): Array<{ name: keyof PipelineEvents; mailbox: string; count: number; bytes?: number; reason?: string }> {
    const seen: Array<{ name: keyof PipelineEvents; mailbox: string; count: number; bytes?: number; reason?: string }> = [];
    const names = [
      'inbound:listed',
      'inbound:placed',
      'inbound:received',
      'inbound:redelivered',
      'inbound:failed',
      'inbound:deferred',
      'outbound:claimed',
      'outbound:uploaded',
      'outbound:sent',
      'outbound:rejected',
      'outbound:failed',
      'outbound:deferred',
    ] as const satisfies (keyof PipelineEvents)[];
    for (const name of names) daemon.events.on(name, (e) => seen.push({ name, ...e }));
    return seen;
  }

  const total = (seen: ReturnType<typeof record>, name: keyof PipelineEvents, field: 'count' | 'bytes' = 'count'): number =>
    seen.filter((e) => e.name === name).reduce((n, e) => n + (e[field] ?? 0), 0);

  it('once: every item is reported, and the events add up to the cycle totals', async () => {
    const w = await setup();
    const good = [x12(41), x12(42), x12(43)];
    good.forEach((body, i) => fs.writeFileSync(path.join(w.dir, 'out', `ok${i}.x12`), body));
    fs.writeFileSync(path.join(w.dir, 'out', 'truncated.x12'), x12(44).slice(0, 60));
    const parcels = [Buffer.from('ISA*one~'), Buffer.alloc(3000, 7)];
    for (const [i, content] of parcels.entries()) await w.emu.inject({ mailboxId: 1001, fileName: `p${i}.x12`, content });
    const daemon = await Daemon.open({ loaded: w.loaded, logger: silentLogger, waitForService: false });
    cleanups.push(() => daemon.close());
    const seen = record(daemon);
    const { totals } = await daemon.runOnce();

    expect(total(seen, 'outbound:claimed')).toBe(4);
    expect(total(seen, 'outbound:sent')).toBe(3);
    expect(total(seen, 'outbound:sent', 'bytes')).toBe(good.reduce((n, b) => n + Buffer.byteLength(b), 0));
    expect(total(seen, 'outbound:rejected')).toBe(1);
    expect(seen.find((e) => e.name === 'outbound:rejected')?.reason).toBeTruthy();
    expect(total(seen, 'inbound:received')).toBeGreaterThanOrEqual(2);
    expect(total(seen, 'inbound:received', 'bytes')).toBeGreaterThanOrEqual(parcels.reduce((n, b) => n + b.length, 0));
    expect(seen.every((e) => e.mailbox === 'ours')).toBe(true);
    // The same work, counted two ways.
    expect(totals.outbound).toMatchObject({ claimed: 4, archived: 3, rejected: 1 });
    expect(totals.inbound.confirmed).toBe(total(seen, 'inbound:received'));
    expect(totals.inbound.bytes).toBe(total(seen, 'inbound:received', 'bytes'));
  });

  it('run, continuous outbound: lastCycle and /metrics count the files sent between cycles', async () => {
    const w = await setup('continuous');
    const daemon = await Daemon.open({ loaded: w.loaded, logger: silentLogger, waitForService: true, serveHttp: true });
    cleanups.push(() => daemon.close());
    const seen = record(daemon);
    await daemon.start();
    for (let i = 0; i < 3; i++) fs.writeFileSync(path.join(w.dir, 'out', `r${i}.x12`), x12(50 + i));
    await eventually(() => total(seen, 'outbound:sent') === 3, 15_000, 'three files sent');
    // A later cycle must record them (the journal's lastCycle, as `status` shows it).
    const journal = Journal.open(path.join(w.dir, 'state', 'journal.sqlite'), { readonly: true });
    cleanups.push(() => journal.close());
    await eventually(
      () => {
        const last = JSON.parse(
          (journal.db.prepare("SELECT value FROM meta WHERE key = 'lastCycle'").get() as { value: string } | undefined)?.value ?? 'null',
        ) as { outbound: { archived: number } } | null;
        return last !== null && last.outbound.archived > 0 ? true : undefined;
      },
      10_000,
      'a cycle that records the outbound work',
    );
    const metrics = await (await fetch(`${daemon.httpUrl as string}/metrics`)).text();
    expect(metrics).toContain('gridsync_transfers_total{direction="out",mailbox="ours"} 3');
  });

  it('a listener that throws does not fail a delivery', async () => {
    const w = await setup();
    fs.writeFileSync(path.join(w.dir, 'out', 'a.x12'), x12(61));
    const daemon = await Daemon.open({ loaded: w.loaded, logger: silentLogger, waitForService: false });
    cleanups.push(() => daemon.close());
    daemon.events.on('outbound:sent', () => {
      throw new Error('listener bug');
    });
    const { totals } = await daemon.runOnce();
    expect(totals.outbound.archived).toBe(1);
    expect(fs.readdirSync(path.join(w.dir, 'sent'))).toEqual(['a.x12']);
  });
});
