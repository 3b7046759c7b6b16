// A month-end backlog against the built daemon, from the outside: `node bench/backlog.mjs --in N
// --out N [--live] [--term-at K] [--max-list M] [--dir D]`. N parcels of 5 KB wait on an emulator
// process and N files of 5 KB in the outbox (written before the start, or with --live right after
// the daemon is ready); `gridsync run` works through them while this process samples its RSS
// (/proc), heap (/metrics) and how fast /readyz and /metrics answer. With --term-at it gets SIGTERM
// once K items are done; run again with --dir D (the folder printed) to let a fresh daemon finish
// the rest. At the end it counts the inbox, sentDir and the emulator's parcels: each once, none left.
// `npm run build` first; GRIDSYNC_DIST=OTHER/dist measures another checkout's daemon.

import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { spawnChild } from './children.mjs';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cliPath = path.join(process.env.GRIDSYNC_DIST ?? path.join(repoRoot, 'dist'), 'cli', 'main.js');
const SIZE = 5 * 1024;
const { values: opts } = parseArgs({
  options: {
    in: { type: 'string', default: '0' },
    out: { type: 'string', default: '0' },
    live: { type: 'boolean', default: false },
    'term-at': { type: 'string' },
    'max-list': { type: 'string' },
    dir: { type: 'string' },
  },
});
const nIn = Number(opts.in);
const nOut = Number(opts.out);
const resumed = opts.dir !== undefined;
const root = opts.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-backlog-'));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const t0 = performance.now();
const say = (msg) => console.log(`[${((performance.now() - t0) / 1000).toFixed(1)} s] ${msg}`);
for (const d of ['inbox', 'outbox', 'sent', 'error', 'state']) fs.mkdirSync(path.join(root, d), { recursive: true });

// The emulator keeps its port in the folder: the journal of a resumed run belongs to that service.
const portFile = path.join(root, 'emulator.port');
const emuPort = resumed ? fs.readFileSync(portFile, 'utf8') : '0';
const emu = spawnChild(process.execPath, [cliPath, 'emulator', '--port', emuPort, '--data', path.join(root, 'emulator.sqlite')], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
/** @type {string} */
const url = await new Promise((resolve, reject) => {
  let out = '';
  emu.stdout.on('data', (d) => {
    out += d;
    const m = /listening on (http:\/\/127\.0\.0\.1:(\d+))/.exec(out);
    if (m) {
      fs.writeFileSync(portFile, m[2]);
      resolve(m[1]);
    }
  });
  emu.once('exit', (code) => reject(new Error(`emulator exited ${code}: ${out}`)));
});
emu.stdout.resume();

async function admin(method, p, body) {
  const res = await fetch(url + p, { method, headers: { 'content-type': 'application/json' }, body: body && JSON.stringify(body) });
  /** @type {any} */
  const json = await res.json();
  if (!res.ok) throw new Error(`${method} ${p}: ${res.status}`);
  return json.data;
}

async function seedParcels() {
  let next = 0;
  const worker = async () => {
    for (let k = next++; k < nIn; k = next++) {
      const content = Buffer.alloc(SIZE, 65 + (k % 26));
      content.write(`#${k}#`, 0);
      await admin('POST', '/_emulator/inject', { mailboxId: 1001, fileName: `in-${k}.x12`, content: content.toString('base64') });
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  say(`${nIn} parcels pending on the service`);
}

/** As an ERP drops them: written under a temporary name, then renamed. */
async function writeOutbox() {
  const dir = path.join(root, 'outbox');
  for (let k = 0; k < nOut; k++) {
    const b = Buffer.alloc(SIZE, 67);
    b.write(`ISA#${k}#`, 0);
    await fsp.writeFile(path.join(dir, `.o-${k}.tmp`), b);
    await fsp.rename(path.join(dir, `.o-${k}.tmp`), path.join(dir, `o-${k}.x12`));
  }
  say(`${nOut} files in the outbox`);
}

if (!resumed && nIn > 0) await seedParcels();
if (!resumed && nOut > 0 && !opts.live) await writeOutbox();

const httpPort = 20_000 + Math.floor(Math.random() * 20_000);
const config = {
  api: { baseUrl: url, apiKey: 'demo-key-1001', ...(opts['max-list'] ? { limits: { maxListEntries: Number(opts['max-list']) } } : {}) },
  stateDir: path.join(root, 'state'),
  log: { level: 'warn', pretty: false },
  http: { enabled: true, port: httpPort },
  schedule: { poll: '2s' },
  mailboxes: [
    {
      mailboxId: 1001,
      inbox: { dir: path.join(root, 'inbox') },
      // Routed by grid ids, and not X12: the demo partner answers nothing, so the inbox holds only the backlog.
      outbox: {
        dir: path.join(root, 'outbox'),
        sentDir: path.join(root, 'sent'),
        errorDir: path.join(root, 'error'),
        stableMs: '1s',
        gridIdFrom: 5001,
        gridIdTo: 5002,
        validateEnvelope: false,
        duplicates: 'allow',
      },
    },
  ],
};
const configFile = path.join(root, 'gridsync.yaml');
fs.writeFileSync(configFile, YAML.stringify(config), { mode: 0o600 });
const daemon = spawnChild(process.execPath, [cliPath, 'run', '-c', configFile], {
  stdio: ['ignore', fs.openSync(path.join(root, 'daemon.log'), 'a'), 'inherit'],
});
const started = performance.now();
/** @type {{ code: number | null, at: number } | undefined} */
let exited;
daemon.once('exit', (code) => (exited = { code, at: performance.now() }));

const count = (d) => fs.readdirSync(path.join(root, d)).length;
/** CPU seconds the daemon used so far, every thread (clock ticks of 10 ms). */
function cpuSeconds() {
  const fields = fs.readFileSync(`/proc/${daemon.pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
const rssMb = () => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${daemon.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
/** Milliseconds the endpoint took to answer, its status and body. */
async function timed(p) {
  const start = performance.now();
  const res = await fetch(`http://127.0.0.1:${httpPort}${p}`, { signal: AbortSignal.timeout(10_000) });
  const body = await res.text();
  return { ms: performance.now() - start, status: res.status, body };
}

const peak = { rss: 0, heap: 0, readyz: 0, metrics: 0, cpu: 0 };
let readyAt;
let termAt;
let doneAt;
let lastSay = 0;
while (!exited) {
  try {
    peak.rss = Math.max(peak.rss, rssMb());
    peak.cpu = cpuSeconds();
    const ready = await timed('/readyz');
    const metrics = await timed('/metrics');
    peak.readyz = Math.max(peak.readyz, ready.ms);
    peak.metrics = Math.max(peak.metrics, metrics.ms);
    peak.heap = Math.max(peak.heap, Number(/^nodejs_heap_size_used_bytes (\S+)/m.exec(metrics.body)?.[1] ?? 0) / 2 ** 20);
    if (ready.status === 200 && readyAt === undefined) {
      readyAt = performance.now();
      say('ready');
      if (!resumed && opts.live && nOut > 0) void writeOutbox();
    }
  } catch {
    // Not listening yet, or stopping.
  }
  const done = count('inbox') + count('sent');
  if (performance.now() - lastSay > 5000) {
    lastSay = performance.now();
    say(`RSS ${rssMb().toFixed(0)} MB, inbox ${count('inbox')}, sent ${count('sent')}, outbox ${count('outbox')}`);
  }
  if (termAt === undefined && opts['term-at'] !== undefined && done >= Number(opts['term-at'])) termAt = performance.now();
  if (termAt === undefined && count('inbox') >= nIn && count('sent') >= nOut) termAt = doneAt = performance.now();
  if (termAt !== undefined && daemon.exitCode === null && !daemon.killed) daemon.kill('SIGTERM');
  await sleep(250);
}
if (doneAt !== undefined) say(`all done ${((doneAt - started) / 1000).toFixed(1)} s after the daemon started`);
say(`exit code ${exited.code}, ${((exited.at - termAt) / 1000).toFixed(1)} s after SIGTERM; the daemon used ${peak.cpu.toFixed(0)} CPU-s`);
say(
  `peak RSS ${peak.rss.toFixed(0)} MB, peak heap used ${peak.heap.toFixed(0)} MB, slowest /readyz ${peak.readyz.toFixed(0)} ms, /metrics ${peak.metrics.toFixed(0)} ms`,
);
/** @type {{ fileName: string, direction: string, status: string }[]} */
const parcels = await admin('GET', '/_emulator/parcels?mailboxId=1001');
const received = parcels.filter((p) => p.direction === 'in');
const uploaded = parcels.filter((p) => p.direction === 'out').map((p) => p.fileName);
say(
  `service: ${received.filter((p) => p.status === 'InBoxReady').length} of ${received.length} parcels still pending, ` +
    `${uploaded.length} uploads (${new Set(uploaded).size} names); inbox ${count('inbox')}, sent ${count('sent')}, ` +
    `outbox ${count('outbox')}, error ${count('error')}; folder ${root}`,
);
emu.kill('SIGTERM');
