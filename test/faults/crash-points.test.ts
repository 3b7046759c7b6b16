// The deterministic core of the crash tests (docs/testing.md): `gridsync once` as a child process,
// killed with SIGKILL by each named crash point for n = 1, 2, 3, then run again until done. Every
// parcel must be in the inbox exactly once and confirmed; every file uploaded exactly once and
// archived; nothing left in staging or processing.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '@gridsync/emulator';
import { edifact, x12 } from '../helpers/edi.js';
import { onceChild } from '../helpers/daemon-child.js';
import { repoRoot } from '../helpers/journal-child.js';
import { emulatorParcels, listFiles } from '../helpers/world.js';

/**
 * Every crash point the source names (`crashPoint('in.staged')` in src/, read here), so a new
 * point is tested without anyone adding it to a list; the `in.`/`out.` prefix says its direction.
 */
function crashPointsInSource(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return crashPointsInSource(p);
    if (!p.endsWith('.ts') || p.endsWith(path.join('journal', 'crash-points.ts'))) return [];
    return [...fs.readFileSync(p, 'utf8').matchAll(/\bcrashPoint\('([^']+)'\)/g)].map((m) => m[1] as string);
  });
}
const ALL_POINTS = [...new Set(crashPointsInSource(path.join(repoRoot, 'src')))];
const INBOUND_POINTS = ALL_POINTS.filter((p) => p.startsWith('in.'));
const OUTBOUND_POINTS = ALL_POINTS.filter((p) => p.startsWith('out.'));
const PER_RUN = 4;
// The same suite over both service interfaces: the guarantees must not depend on the transport.
const PROTOCOLS = ['rest', 'soap'] as const;
/** The passes of a point killed at: the 1st, 2nd and 3rd. */
const NTH = [1, 2, 3] as const;
/** One mailbox pair per scenario: a fixed 100 ran out when a crash point was added (mailbox 2100 does not exist). */
const SCENARIOS = PROTOCOLS.length * ALL_POINTS.length * NTH.length;
type Protocol = (typeof PROTOCOLS)[number];
const sha = (b: Buffer | string): string => createHash('sha256').update(b).digest('hex');

let emu: Emulator;
let root: string;
let mailboxSeq = 0;

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-crash-'));
  emu = await startEmulator({
    settings: { acknowledgeDelayMs: 0 },
    // One mailbox pair per scenario, so scenarios run in parallel without seeing each other's parcels.
    seed: {
      networks: [{ networkId: 1, uniqueId: 'NET', companyName: 'Net' }],
      mailboxes: Array.from({ length: SCENARIOS }, (_, i) => [
        { mailboxId: 2000 + i, networkId: 1, uniqueId: `US${i}`, companyName: `Us ${i}` },
        { mailboxId: 3000 + i, networkId: 1, uniqueId: `THEM${i}`, companyName: `Them ${i}` },
      ]).flat(),
      gridIds: Array.from({ length: SCENARIOS }, (_, i) => [
        { gridId: 20_000 + i, mailboxId: 2000 + i, qualifier: 'ZZ', id: `US${i}` },
        { gridId: 30_000 + i, mailboxId: 3000 + i, qualifier: 'ZZ', id: `THEM${i}` },
      ]).flat(),
      interconnects: Array.from({ length: SCENARIOS }, (_, i) => ({
        interconnectId: 7000 + i,
        gridIdFrom: 20_000 + i,
        gridIdTo: 30_000 + i,
      })),
      users: Array.from({ length: SCENARIOS }, (_, i) => ({
        userId: 100 + i,
        login: `u${i}`,
        authLevel: 'MailboxAdmin' as const,
        networkId: 1,
        mailboxId: 2000 + i,
        apiKey: `key-${i}`,
      })),
    },
  });
});
afterAll(async () => {
  await emu.close();
  fs.rmSync(root, { recursive: true, force: true });
});

async function scenario(
  protocol: Protocol,
  point: string,
  n: number,
): Promise<{ point: string; n: number; killed: boolean; runs: number }> {
  const i = mailboxSeq++;
  const dir = path.join(root, `${protocol}-${point}-${n}`);
  const d = {
    inbox: path.join(dir, 'inbox'),
    outbox: path.join(dir, 'outbox'),
    sent: path.join(dir, 'sent'),
    error: path.join(dir, 'error'),
    state: path.join(dir, 'state'),
  };
  for (const p of Object.values(d)) fs.mkdirSync(p, { recursive: true });
  const config = path.join(dir, 'gridsync.yaml');
  fs.writeFileSync(
    config,
    [
      `api: { baseUrl: "${emu.url}", protocol: ${protocol}, apiKey: key-${i}, maxAttempts: 1 }`,
      `stateDir: ${d.state}`,
      'log: { level: warn, pretty: false }',
      'mailboxes:',
      `  - mailboxId: ${2000 + i}`,
      `    inbox: { dir: ${d.inbox}, doneMarker: true, concurrency: 2 }`,
      `    outbox: { dir: ${d.outbox}, sentDir: ${d.sent}, errorDir: ${d.error}, stableMs: 20, concurrency: 2, gridIdFrom: ${20_000 + i}, gridIdTo: ${30_000 + i} }`,
      '',
    ].join('\n'),
  );
  const inbound = new Map<string, number>();
  for (let k = 0; k < PER_RUN; k++) {
    const content = Buffer.from(`${point} ${n} inbound ${k} ${'x'.repeat(k * 1000)}`);
    await emu.inject({ mailboxId: 2000 + i, fileName: k % 2 ? 'same.x12' : `in-${k}.x12`, content });
    inbound.set(sha(content), (inbound.get(sha(content)) ?? 0) + 1);
  }
  const outbound = new Map<string, string>();
  for (let k = 0; k < PER_RUN; k++) {
    const content = k % 2 ? edifact(1000 * i + k + 1) : x12(1000 * i + k + 1);
    fs.writeFileSync(path.join(d.outbox, `out-${k}.${k % 2 ? 'edi' : 'x12'}`), content);
    outbound.set(`out-${k}.${k % 2 ? 'edi' : 'x12'}`, sha(content));
  }
  const first = await onceChild(config, `${point}:${n}`);
  const killed = first.signal === 'SIGKILL';
  let runs = 1;
  for (; runs < 4; runs++) {
    const r = await onceChild(config);
    expect(r.code, `${point}:${n} rerun ${runs}: ${r.stderr}`).toBe(0);
    if (listFiles(d.outbox).length === 0 && listFiles(path.join(d.state, 'staging')).length === 0) break;
  }
  const have = new Map<string, number>();
  const files = listFiles(d.inbox);
  for (const f of files) {
    if (f.endsWith('.done')) continue;
    expect(files, `${point}:${n} marker of ${f}`).toContain(`${f}.done`);
    const h = sha(fs.readFileSync(path.join(d.inbox, f)));
    have.set(h, (have.get(h) ?? 0) + 1);
  }
  expect(have, `${point}:${n} inbox`).toEqual(inbound);
  const parcels = await emulatorParcels(emu, 2000 + i);
  expect(
    parcels.filter((p) => p.direction === 'in').every((p) => p.status === 'InBoxTransferred'),
    `${point}:${n} confirmed`,
  ).toBe(true);
  const uploads = parcels.filter((p) => p.direction === 'out');
  expect(uploads.map((p) => p.fileName).sort(), `${point}:${n} uploaded exactly once`).toEqual([...outbound.keys()].sort());
  for (const u of uploads) expect(u.sha256).toBe(outbound.get(u.fileName as string));
  expect(listFiles(d.sent).sort()).toEqual([...outbound.keys()].sort());
  expect(listFiles(d.error)).toEqual([]);
  expect(listFiles(path.join(d.state, 'staging'))).toEqual([]);
  expect(listFiles(path.join(d.state, 'processing'))).toEqual([]);
  return { point, n, killed, runs };
}

describe('the crash points under test', () => {
  it('are read from the source, every one with its direction', () => {
    expect(INBOUND_POINTS.length).toBeGreaterThan(3);
    expect(OUTBOUND_POINTS.length).toBeGreaterThan(3);
    expect(ALL_POINTS.filter((p) => !INBOUND_POINTS.includes(p) && !OUTBOUND_POINTS.includes(p))).toEqual([]);
  });
});

describe.each(PROTOCOLS)('named crash points over %s: SIGKILL at each, for n = 1, 2, 3, then recovery', (protocol) => {
  for (const [label, points] of [
    ['inbound', INBOUND_POINTS],
    ['outbound', OUTBOUND_POINTS],
  ] as const) {
    it(`${label}: nothing lost, nothing twice`, async () => {
      const jobs = points.flatMap((p) => NTH.map((n) => [p, n] as const));
      const results: Awaited<ReturnType<typeof scenario>>[] = [];
      for (let k = 0; k < jobs.length; k += 4)
        results.push(...(await Promise.all(jobs.slice(k, k + 4).map(([p, n]) => scenario(protocol, p, n)))));
      const kills = results.filter((r) => r.killed).length;
      console.log(
        JSON.stringify({
          suite: `crash-points-${protocol}-${label}`,
          scenarios: results.length,
          kills,
          lost: 0,
          duplicated: 0,
          notReached: results.filter((r) => !r.killed).map((r) => `${r.point}:${r.n}`),
        }),
      );
      // With PER_RUN items per direction every point is passed at least 3 times in one run.
      expect(kills).toBe(results.length);
    }, 300_000);
  }
});
