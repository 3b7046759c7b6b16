// Retention of failed rows. Inbound `failed` and outbound `in_error` rows were never pruned, so a
// daemon running for years grew its journal without bound when partners sent bad files. Now each
// goes once it is older than retention.journalDays and what it guards is gone — but no sooner: a
// failed parcel still pending on the service keeps its row (without it the next listing would
// download it again), and so does an in_error file still in errorDir (requeue needs its row). The
// built daemon runs against a scripted service, with a journal written beforehand.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { InboundJournal, Journal, OutboundJournal } from '../../../src/journal/index.js';
import { eventually, runCli, startCli, type CliChild } from '../../helpers/daemon-child.js';
import { makeDaemonWorld, type DaemonWorld } from '../../helpers/daemon-config.js';
import { startScriptedService, type ScriptedService } from '../../helpers/scripted-service.js';

const MB = 1001;
const DAY = 86_400_000;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function service(): Promise<ScriptedService> {
  const svc = await startScriptedService({ apiKey: 'retention-key-7Hq2' });
  cleanups.push(() => svc.close());
  return svc;
}

function world(svc: ScriptedService, limits: Record<string, unknown> = {}): DaemonWorld {
  const w = makeDaemonWorld({
    api: { baseUrl: svc.url, protocol: 'rest', apiKey: svc.apiKey, limits },
    log: { level: 'info', pretty: false },
  });
  cleanups.push(() => w.cleanup());
  for (const d of [w.inbox, w.outbox, w.error]) fs.mkdirSync(d, { recursive: true });
  return w;
}

/** The journal as a run long ago left it: written with the clock at `at()`. */
async function withJournal(w: DaemonWorld, write: (j: Journal, clock: { at: number }) => Promise<void>): Promise<void> {
  const clock = { at: Date.now() - 200 * DAY };
  const j = Journal.open(path.join(w.state, 'journal.sqlite'), { now: () => clock.at });
  try {
    await write(j, clock);
  } finally {
    await j.close();
  }
}

async function failedParcel(j: Journal, parcelId: number): Promise<void> {
  const inbound = new InboundJournal(j);
  await inbound.recordListed(MB, { parcelId, fileName: `p${parcelId}.x12` });
  await inbound.markFailed(MB, parcelId, 'content did not verify');
}

async function inErrorFile(j: Journal, w: DaemonWorld, name: string, finalPath: string | null): Promise<number> {
  const outbound = new OutboundJournal(j);
  const row = await outbound.markClaiming(MB, w.outbox, name, path.join(w.outbox, name), path.join(w.dir, 'processing'));
  await outbound.markErroring(row.id, { reason: 'not an interchange', errorCode: 'OUTBOUND_INVALID_INTERCHANGE' });
  await outbound.markInError(row.id, finalPath);
  return row.id;
}

/** A confirmed row as old as the others: retention prunes it on any version, so its log line comes either way. */
async function confirmedParcel(j: Journal, parcelId: number): Promise<void> {
  const inbound = new InboundJournal(j);
  await inbound.recordListed(MB, { parcelId });
  await inbound.markStaged(MB, parcelId, { stagingPath: '/s', bytes: 1, sha256: 'ab'.repeat(32), finalPath: '/i', fileName: 'i' });
  await inbound.markPlaced(MB, parcelId);
  await inbound.markConfirmed(MB, parcelId, 'already-confirmed');
}

/** `gridsync run` until it logs `line` and then lists the inbox twice more (a whole cycle after the prune), then SIGTERM. */
async function runUntil(w: DaemonWorld, svc: ScriptedService, line: RegExp): Promise<string> {
  const child: CliChild = startCli(['run', '-c', w.configFile], {}, w.dir);
  cleanups.push(() => child.kill('SIGKILL'));
  await child.waitFor(line);
  const listings = (): number => svc.requests.filter((r) => r.path === '/v2/parcels/pending-inbox-list').length;
  const before = listings();
  await eventually(() => listings() > before + 1, 20_000, 'a cycle after the prune');
  child.kill('SIGTERM');
  const exit = await child.exited;
  expect(exit.code, exit.stderr).toBe(0);
  return child.output();
}

async function rows(w: DaemonWorld): Promise<{ inbound: string[]; outbound: number[] }> {
  const j = Journal.open(path.join(w.state, 'journal.sqlite'), { readonly: true });
  try {
    const inbound = await j.all<{ parcel_id: number; state: string }>('SELECT parcel_id, state FROM inbound_parcels ORDER BY parcel_id');
    const outbound = await j.all<{ id: number }>("SELECT id FROM outbound_files WHERE state = 'in_error' ORDER BY id");
    return { inbound: inbound.map((r) => `${r.parcel_id} ${r.state}`), outbound: outbound.map((r) => r.id) };
  } finally {
    await j.close();
  }
}

describe('retention of failed rows', () => {
  it('prunes what nothing can bring back; a failed parcel still pending stays failed and is not downloaded again', async () => {
    const svc = await service();
    const pending = Number(svc.addInbound('bad.x12', 'ISA*00*broken~').parcelId);
    const w = world(svc);
    fs.writeFileSync(path.join(w.error, 'kept.x12'), 'not an interchange');
    fs.writeFileSync(path.join(w.error, 'kept.x12.error.json'), '{}\n');
    let kept = 0;
    let unmounted = 0;
    await withJournal(w, async (j, clock) => {
      await failedParcel(j, pending); // still listed by the service
      await failedParcel(j, 4_000_001); // dropped by the service (past its InBoxTimeout)
      await confirmedParcel(j, 4_000_003);
      await inErrorFile(j, w, 'gone.x12', path.join(w.error, 'gone.x12')); // errorRetentionDays took its file
      await inErrorFile(j, w, 'vanished.x12', null); // nothing reached errorDir
      kept = await inErrorFile(j, w, 'kept.x12', path.join(w.error, 'kept.x12'));
      unmounted = await inErrorFile(j, w, 'away.x12', path.join(w.dir, 'unmounted-share', 'away.x12'));
      clock.at = Date.now();
      await failedParcel(j, 4_000_002); // failed today: young
    });

    const log = await runUntil(w, svc, /"msg":"journal pruned"/);
    // The failed parcel, still pending, was listed (by the cycles, before and after the prune, and by retention) and never fetched.
    expect(svc.requests.filter((r) => r.path === '/v2/parcels/download')).toEqual([]);
    expect(fs.readdirSync(w.inbox)).toEqual([]);
    expect(log).toMatch(/"rows":4,"failed":1,"inError":2/);
    expect(await rows(w)).toEqual({
      inbound: ['4000002 failed', `${pending} failed`],
      outbound: [kept, unmounted],
    });
    // The file left in errorDir can still be requeued through its row.
    const requeued = runCli(['requeue', '-c', w.configFile, 'kept.x12']);
    expect(requeued.status, requeued.stderr).toBe(0);
    expect(requeued.stdout).not.toMatch(/no record/);
  });

  it('keeps every failed parcel when the pending list cannot show which are gone (cut at maxListEntries)', async () => {
    const svc = await service();
    const ids = [svc.addInbound('a.x12', 'ISA*00*a~'), svc.addInbound('b.x12', 'ISA*00*b~')].map((p) => Number(p.parcelId));
    const w = world(svc, { maxListEntries: 1 });
    await withJournal(w, async (j) => {
      for (const id of [...ids, 4_000_001]) await failedParcel(j, id);
    });

    const log = await runUntil(w, svc, /"msg":"retention: failed parcels kept: the pending list cannot show which are gone"/);
    expect(log).toContain('it is cut at api.limits.maxListEntries');
    expect((await rows(w)).inbound).toEqual(['4000001 failed', ...ids.map((id) => `${id} failed`)]);
    expect(svc.requests.filter((r) => r.path === '/v2/parcels/download')).toEqual([]);
  });
});
