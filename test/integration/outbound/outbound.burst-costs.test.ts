// What a burst of outbound files costs per file beyond its own steps (issue #27: a cold `once` at
// a bounded CPU per item): sentDir is opened once for archives under way together, not once per
// file, and a claim group queues its own rows instead of reading every unfinished row back.
// Counted on node:fs and on the journal against a scripted service; every file is still sent once.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { x12 } from '../../helpers/edi.js';
import { startScriptedService } from '../../helpers/scripted-service.js';
import { scriptedWorld } from '../../helpers/scripted-world.js';
import { listFiles, outboundPipeline } from '../../helpers/world.js';

const DROPPED = 200;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function drop(): Promise<{
  run: () => Promise<void>;
  dirs: Record<string, string>;
  svcOut: () => number;
  journalReads: () => number;
}> {
  const svc = await startScriptedService();
  const { dir: root, client, journal } = scriptedWorld(svc, cleanups);
  const dirs = Object.fromEntries(['inbox', 'outbox', 'sent', 'error', 'state'].map((d) => [d, path.join(root, d)]));
  for (const d of Object.values(dirs)) fs.mkdirSync(d);
  for (let i = 0; i < DROPPED; i++) fs.writeFileSync(path.join(dirs.outbox as string, `bc-${i}.x12`), x12(i));
  const past = new Date(Date.now() - 60_000);
  for (const f of listFiles(dirs.outbox as string)) fs.utimesSync(path.join(dirs.outbox as string, f), past, past);
  const p = outboundPipeline(
    { client, journal, dirs: dirs as Record<'inbox' | 'outbox' | 'sent' | 'error' | 'state', string> },
    { gridIdFrom: 7001, gridIdTo: 7002, concurrency: 8 },
  );
  await p.checkPrerequisites();
  const all = vi.spyOn(journal, 'all');
  const unfinishedReads = (): number =>
    all.mock.calls.filter(([sql]) => /FROM outbound_files WHERE mailbox_id = \? AND outbox_dir = \? AND state IN/.test(sql as string))
      .length;
  return {
    run: async () => void (await p.runCycle()),
    dirs,
    svcOut: () => svc.parcels.filter((x) => x.direction === 'out').length,
    journalReads: unfinishedReads,
  };
}

describe('outbound: per-file costs of a burst', () => {
  it('archives under way together share one open of sentDir (one per file before); every file is sent and archived once', async () => {
    const d = await drop();
    const open = fsp.open.bind(fsp);
    let sentOpens = 0;
    vi.spyOn(fsp, 'open').mockImplementation(((p: fs.PathLike, ...rest: unknown[]) => {
      if (path.resolve(String(p)) === path.resolve(d.dirs.sent as string)) sentOpens++;
      return (open as (...a: unknown[]) => Promise<fsp.FileHandle>)(p, ...rest);
    }) as typeof fsp.open);
    await d.run();
    expect(listFiles(d.dirs.sent as string)).toHaveLength(DROPPED);
    expect(d.svcOut()).toBe(DROPPED);
    expect(sentOpens).toBeGreaterThan(0);
    // Eight uploads in flight: their archives overlap, so far fewer opens than files.
    expect(sentOpens).toBeLessThanOrEqual(DROPPED / 2);
  }, 60_000);

  it('a claim group queues the rows it claimed: the unfinished rows are read a few times per cycle, not once per group', async () => {
    const d = await drop();
    await d.run();
    expect(d.svcOut()).toBe(DROPPED);
    expect(listFiles(d.dirs.sent as string)).toHaveLength(DROPPED);
    // 200 files are 7 claim groups of 32: once per group (and the scan's own and the final read) before.
    expect(d.journalReads()).toBeLessThanOrEqual(3);
  }, 60_000);
});
