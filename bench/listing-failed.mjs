// `node bench/listing-failed.mjs [N] [--rounds R] [--against DIR]` (after `npm run build`): how long
// an inbound cycle takes while N (default 500) parcels are pending on the service whose journal rows
// are `failed` — the cycle only lists and reads the journal, it downloads nothing — and how many
// statements it hands the journal. With GRIDSYNC_BENCH_JOURNAL_URL=postgres://… on PostgreSQL (its
// inbound_parcels, events and lease tables are emptied), else on SQLite. `--against DIR`: another
// built checkout measured too, its cycles interleaved with this tree's in the same run. The
// emulator runs in a child process.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { spawnChild } from './children.mjs';

const MB = 1001;
const here = path.dirname(fileURLToPath(import.meta.url));
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { rounds: { type: 'string', default: '20' }, against: { type: 'string' } },
});
const n = Number(positionals[0] ?? 500);
const rounds = Number(values.rounds);
const url = process.env.GRIDSYNC_BENCH_JOURNAL_URL;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** A build's modules, by its dist folder. */
async function build(name, dist) {
  const load = (p) => import(pathToFileURL(path.join(dist, p)).href);
  const [{ openJournal, InboundJournal }, { InboundPipeline }, { GridClient }, { DEFAULTS }] = await Promise.all([
    load('journal/index.js'),
    load('inbound/index.js'),
    load('api/index.js'),
    load('config/defaults.js'),
  ]);
  return { name, openJournal, InboundJournal, InboundPipeline, GridClient, DEFAULTS };
}

/** The store as the pipeline sees it, counting the statements it is handed (reads; no commit happens here). */
function counting(store) {
  const counter = { n: 0 };
  const counted = new Proxy(store, {
    get(target, key) {
      const v = target[key];
      if (key === 'get' || key === 'all') return (...a) => (counter.n++, v.apply(target, a));
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  return { counted, counter };
}

const builds = [await build('this tree', path.join(here, '..', 'dist'))];
if (values.against) builds.push(await build(values.against, path.join(path.resolve(values.against), 'dist')));

/** `gridsync emulator` in a process of its own: its work stays out of the cycles measured here. */
async function startEmulatorChild() {
  const proc = spawnChild(process.execPath, [path.join(here, '..', 'dist', 'cli', 'main.js'), 'emulator', '--port', '0'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  for await (const chunk of proc.stdout) {
    out += chunk;
    const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
    if (m) {
      proc.stdout.resume();
      return { url: m[1], close: () => proc.kill('SIGTERM') };
    }
  }
  throw new Error(`the emulator did not start: ${out}`);
}

/** One parcel into the mailbox's pending list; its id. */
async function inject(emuUrl, k) {
  const res = await fetch(`${emuUrl}/_emulator/inject`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ mailboxId: MB, fileName: `bad-${k}.x12`, content: Buffer.from(`ISA*${k}~`).toString('base64') }),
  });
  if (!res.ok) throw new Error(`inject: ${res.status} ${await res.text()}`);
  /** @type {any} */
  const json = await res.json();
  return Number(json?.data?.parcelId ?? json?.parcelId);
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-listing-bench-'));
const emu = await startEmulatorChild();
const setup = await builds[0].openJournal({ url, stateDir: dir }, { owner: 'bench' });
if (url) {
  for (const table of ['inbound_parcels', 'events', 'lease']) await setup.maintain(`DELETE FROM ${table}`);
  if (!(await setup.leases.acquire(MB, 600_000))) throw new Error('could not take the bench mailbox lease');
}
const inbound = new builds[0].InboundJournal(setup);
const ids = [];
for (let k = 0; k < n; k++) ids.push(await inject(emu.url, k));
await Promise.all(ids.map((id) => inbound.recordListed(MB, { parcelId: id })));
await Promise.all(ids.map((id) => inbound.markFailed(MB, id, 'content did not verify')));

const runs = [];
for (const b of builds) {
  // SQLite: the setup's store holds the single-daemon lock; the builds' only read.
  const journal = url
    ? await b.openJournal({ url, stateDir: dir }, { owner: 'bench' })
    : await b.openJournal({ stateDir: dir }, { lock: false });
  const { counted, counter } = counting(journal);
  const client = new b.GridClient({ baseUrl: emu.url, auth: { apiKey: 'demo-key-1001' } });
  const pipeline = new b.InboundPipeline({
    client,
    journal: counted,
    mailbox: { mailboxId: MB, name: 'mb1001', inbox: { ...b.DEFAULTS.inbox, dir: path.join(dir, 'inbox'), minFreeBytes: 0 } },
    stateDir: dir,
  });
  await pipeline.checkPrerequisites();
  runs.push({ b, journal, client, pipeline, counter, ms: [], statements: 0 });
}

// Warm-up, then the builds' cycles one after the other, round by round.
for (const r of runs) await r.pipeline.runCycle();
for (let round = 0; round < rounds; round++) {
  for (const r of runs) {
    const before = r.counter.n;
    const t0 = performance.now();
    const result = await r.pipeline.runCycle();
    r.ms.push(performance.now() - t0);
    r.statements = r.counter.n - before;
    if (result.listed + result.placed + result.redelivered !== 0) throw new Error(`the cycle acted: ${JSON.stringify(result)}`);
  }
}
console.log(`${n} failed parcels pending, ${url ? 'PostgreSQL' : 'SQLite'}, ${rounds} cycles each (median, min–max):`);
for (const r of runs)
  console.log(
    `  ${r.b.name}: ${median(r.ms).toFixed(1)} ms (${Math.min(...r.ms).toFixed(1)}–${Math.max(...r.ms).toFixed(1)}), ${r.statements} journal reads per cycle`,
  );
for (const r of runs) {
  await r.client.close();
  await r.journal.close();
}
await setup.close();
emu.close();
fs.rmSync(dir, { recursive: true, force: true });
