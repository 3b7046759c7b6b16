// The soak harness: the assembled daemon, as a process, against everything at once.
//
// The parent is the oracle (docs/testing.md): it owns the emulator process, injects inbound parcels as a
// trading partner, drops outbound files as the ERP, consumes the inbox as the ERP, injects HTTP
// faults, kills and restarts the daemon and the emulator, fills the inbox filesystem and takes its
// permissions away — all driven by one seed — and at the end checks the invariants against the
// emulator's own records (GET /_emulator/parcels) and the folders.
//
// Plain ESM JavaScript on purpose: it runs the built CLI (dist/) as child processes and is started
// both by `npm run soak -- --minutes N` and by the CI-sized vitest wrapper (soak.test.ts).

import { spawn, spawnSync, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { selfSignedCert } from '../helpers/tls.mjs';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const cliPath = path.join(repoRoot, 'dist', 'cli', 'main.js');

const API_KEY = 'demo-key-1001';
const OUR_MAILBOX = 1001;
const INBOX_FILE_MODE = 0o640;
const STABLE_MS = 400;
const NOBODY = { uid: 65534, gid: 65534 };

/** mulberry32: small, seedable, good enough to drive a test schedule reproducibly. */
export function prng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: (arr) => arr[Math.floor(next() * arr.length)],
    chance: (p) => next() < p,
    bytes: (n) => {
      const b = Buffer.allocUnsafe(n);
      for (let i = 0; i < n; i++) b[i] = Math.floor(next() * 256);
      return b;
    },
  };
}

const sha256 = (buf) => createHash('sha256').update(buf).digest('hex');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function freePort() {
  return await new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {import('node:net').AddressInfo} */ (srv.address());
      srv.close(() => resolve(port));
    });
  });
}

// ---------------------------------------------------------------- EDI content

const pad = (s, n) => String(s).padEnd(n, ' ').slice(0, n);
const ctrl9 = (n) => String(n % 1_000_000_000).padStart(9, '0');

/** A complete X12 interchange from us (ZZ/GRIDSYNC) to the demo partner, ISA exactly 106 chars. */
export function x12Interchange(control, bodyBytes, rnd) {
  const isa = `ISA*00*${pad('', 10)}*00*${pad('', 10)}*ZZ*${pad('GRIDSYNC', 15)}*ZZ*${pad('DEMOPARTNER', 15)}*261122*1200*U*00401*${ctrl9(control)}*0*P*>~`;
  const segs = [];
  let size = isa.length;
  let n = 0;
  while (size < bodyBytes) {
    const seg = `N1*ST*${rnd.int(100000, 999999)}-${n++}~`;
    segs.push(seg);
    size += seg.length;
  }
  return `${isa}GS*IN*GRIDSYNC*DEMOPARTNER*20261122*1200*${control}*X*004010~ST*810*0001~${segs.join('')}SE*${segs.length + 2}*0001~GE*1*${control}~IEA*1*${ctrl9(control)}~`;
}

/** A complete EDIFACT interchange (UNA, UNB … UNZ) from us to the demo partner. */
export function edifactInterchange(control, bodyBytes, rnd) {
  const segs = [];
  let size = 0;
  let n = 0;
  while (size < bodyBytes) {
    const seg = `LIN+${n++}++${rnd.int(100000, 999999)}:EN'`;
    segs.push(seg);
    size += seg.length;
  }
  return `UNA:+.? 'UNB+UNOC:3+GRIDSYNC:ZZ+DEMOPARTNER:ZZ+261122:1200+${control}'UNH+1+ORDERS:D:96A:UN'${segs.join('')}UNT+${segs.length + 2}+1'UNZ+1+${control}'`;
}

// ---------------------------------------------------------------- processes

class Child {
  /**
   * @param {string} name
   * @param {string[]} args
   * @param {{ logFile: string, env?: Record<string, string>, uid?: number, gid?: number }} opts
   */
  constructor(name, args, { logFile, env, uid, gid }) {
    this.name = name;
    this.args = args;
    this.logFile = logFile;
    this.env = env;
    this.uid = uid;
    this.gid = gid;
    this.proc = null;
    this.exits = [];
    this.spawnErrors = [];
  }

  start() {
    const log = fs.openSync(this.logFile, 'a');
    /** @type {import('node:child_process').SpawnOptions} */
    const opts = { cwd: repoRoot, env: { ...process.env, ...this.env }, stdio: ['ignore', log, log] };
    if (this.uid !== undefined) Object.assign(opts, { uid: this.uid, gid: this.gid });
    this.proc = spawn(process.execPath, [cliPath, ...this.args], opts);
    fs.closeSync(log);
    const proc = this.proc;
    this.exited = new Promise((resolve) => {
      proc.once('exit', (code, signal) => {
        this.exits.push({ code, signal });
        resolve({ code, signal });
      });
      // A start that fails (EACCES, EAGAIN) emits 'error' and never 'exit': recorded, so that the
      // report names it instead of an unhandled error and a run that only counts lost items.
      proc.once('error', (/** @type {NodeJS.ErrnoException} */ err) => {
        this.spawnErrors.push(err.code ?? err.message);
        resolve({ code: null, signal: null, error: err.code });
      });
    });
    return proc;
  }

  get running() {
    return this.proc !== null && this.proc.exitCode === null && this.proc.signalCode === null;
  }

  async kill(signal, graceMs = 15_000) {
    if (!this.running) return null;
    this.proc.kill(signal);
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), graceMs);
    const r = await this.exited;
    clearTimeout(timer);
    return r;
  }

  rssMb() {
    if (!this.running) return 0;
    try {
      const status = fs.readFileSync(`/proc/${this.proc.pid}/status`, 'utf8');
      const m = /VmRSS:\s+(\d+) kB/.exec(status);
      return m ? Number(m[1]) / 1024 : 0;
    } catch {
      return 0;
    }
  }
}

/**
 * Why `user` cannot start the built CLI with this Node, or null when it can. Run as that user, so
 * the answer is the kernel's. Every folder above the Node binary and the clone must be searchable
 * by others: a `mktemp -d` (mode 0700) on the way makes each daemon start fail with EACCES.
 */
export function whyUserCannotStart(user, nodePath = process.execPath, cli = cliPath) {
  const r = spawnSync(nodePath, [cli, '--version'], { cwd: '/', uid: user.uid, gid: user.gid, encoding: 'utf8', timeout: 30_000 });
  if (!r.error && r.status === 0) return null;
  const closed = [nodePath, cli].flatMap(closedFoldersAbove);
  const err = /** @type {NodeJS.ErrnoException | undefined} */ (r.error);
  const why = err ? (err.code ?? err.message) : `exit ${r.status}: ${r.stderr.trim().split('\n')[0]}`;
  return `uid ${user.uid} cannot start ${nodePath} ${cli} (${why})${closed.length ? `; not searchable by others: ${[...new Set(closed)].join(', ')}` : ''}`;
}

/** The folders above `file` that others may not enter (no o+x). */
function closedFoldersAbove(file) {
  const closed = [];
  for (let dir = path.dirname(file); ; dir = path.dirname(dir)) {
    if ((fs.statSync(dir).mode & 0o001) === 0) closed.push(dir);
    if (dir === path.dirname(dir)) return closed;
  }
}

async function waitForLine(file, re, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
    const m = re.exec(text);
    if (m) return m;
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${re} in ${file}`);
}

// ---------------------------------------------------------------- emulator admin

class EmulatorAdmin {
  constructor(url) {
    this.url = url;
  }

  async #req(method, p, body) {
    const res = await fetch(this.url + p, {
      method,
      headers: body ? { 'content-type': 'application/json' } : {},
      body: body ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${p} → ${res.status} ${text.slice(0, 200)}`);
    const json = JSON.parse(text);
    return json && typeof json === 'object' && 'data' in json ? json.data : json;
  }

  inject(p) {
    return this.#req('POST', '/_emulator/inject', p);
  }

  setFaults(cfg) {
    return this.#req('POST', '/_emulator/faults', cfg);
  }

  faults() {
    return this.#req('GET', '/_emulator/faults');
  }

  parcels(mailboxId) {
    return this.#req('GET', `/_emulator/parcels?mailboxId=${mailboxId}`);
  }
}

// ---------------------------------------------------------------- folders

async function walk(dir) {
  const out = [];
  let entries;
  try {
    entries = await fsp.readdir(dir, { withFileTypes: true });
  } catch (err) {
    if (err.code === 'ENOENT') return out;
    throw err;
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...(await walk(p)));
    else out.push(p);
  }
  return out;
}

function writeConfig(file, { url, dirs, pollMs, protocol }) {
  const yaml = [
    'api:',
    `  baseUrl: ${url}`,
    `  protocol: ${protocol}`,
    `  apiKey: ${API_KEY}`,
    `stateDir: ${dirs.state}`,
    'log:',
    '  level: info',
    'schedule:',
    `  poll: ${pollMs}ms`,
    'mailboxes:',
    `  - mailboxId: ${OUR_MAILBOX}`,
    '    inbox:',
    `      dir: ${dirs.inbox}`,
    `      stagingDir: ${dirs.staging}`,
    '      doneMarker: true',
    `      fileMode: "${INBOX_FILE_MODE.toString(8).padStart(4, '0')}"`,
    '      concurrency: 4',
    '    outbox:',
    `      dir: ${dirs.outbox}`,
    `      sentDir: ${dirs.sent}`,
    `      errorDir: ${dirs.error}`,
    `      stableMs: ${STABLE_MS}`,
    '      rescanMs: 2000',
    '      validateEnvelope: true',
    '      concurrency: 4',
    '',
  ].join('\n');
  fs.writeFileSync(file, yaml);
}

// ---------------------------------------------------------------- the run

/**
 * @param {{ seconds: number, seed?: number, workDir?: string, log?: (msg: string) => void,
 *           drainTimeoutMs?: number, maxParcelBytes?: number, protocol?: 'rest' | 'soap' }} opts
 */
export async function runSoak(opts) {
  const seed = opts.seed ?? Date.now() & 0x7fffffff;
  const rnd = prng(seed);
  const log = opts.log ?? ((m) => console.log(`[soak] ${m}`));
  const chaosMs = opts.seconds * 1000;
  const drainTimeoutMs = opts.drainTimeoutMs ?? 90_000;
  const maxParcelBytes = opts.maxParcelBytes ?? 3 * 1024 * 1024;
  const asRoot = process.getuid?.() === 0;
  // Before anything is made or mounted: a daemon that cannot start would only show as items lost.
  const cannotStart = asRoot && whyUserCannotStart(NOBODY);
  if (cannotStart) throw new Error(`the daemon cannot run as nobody: ${cannotStart}`);
  const work = opts.workDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-soak-'));
  log(`seed ${seed}, ${opts.seconds}s of chaos over ${opts.protocol ?? 'rest'}, artefacts in ${work}`);

  const notices = [];
  const dirs = {
    mount: path.join(work, 'fs'), // the inbox filesystem: a small tmpfs when root
    emu: path.join(work, 'emulator'),
    outbox: path.join(work, 'outbox'),
    sent: path.join(work, 'sent'),
    error: path.join(work, 'error'),
    consumed: path.join(work, 'erp-consumed'),
    logs: path.join(work, 'logs'),
  };
  // The inbox and its staging folder share the small filesystem; the journal stays on the real disk.
  dirs.inbox = path.join(dirs.mount, 'inbox');
  dirs.staging = path.join(dirs.mount, 'staging');
  dirs.state = path.join(work, 'state');
  for (const d of Object.values(dirs)) fs.mkdirSync(d, { recursive: true });

  let tmpfsMounted = false;
  if (asRoot) {
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=192m,mode=0755', 'tmpfs', dirs.mount]);
      tmpfsMounted = true;
      fs.mkdirSync(dirs.inbox, { recursive: true });
      fs.mkdirSync(dirs.staging, { recursive: true });
    } catch (err) {
      notices.push(`disk-full episodes skipped: cannot mount tmpfs (${err.message.split('\n')[0]})`);
    }
  } else {
    notices.push('disk-full episodes skipped: not root (needs a tmpfs mount)');
  }
  // The daemon runs as nobody when we are root, so that chmod really takes permissions away.
  const daemonUser = asRoot ? NOBODY : undefined;
  if (!asRoot) notices.push('unwritable-inbox episodes skipped: not root (root ignores chmod, needs another user)');
  if (daemonUser) {
    for (const d of [dirs.inbox, dirs.staging, dirs.state, dirs.outbox, dirs.sent, dirs.error, dirs.mount])
      fs.chownSync(d, daemonUser.uid, daemonUser.gid);
    fs.chmodSync(work, 0o755);
  }
  for (const n of notices) log(`NOTICE ${n}`);

  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const emulator = new Child('emulator', ['emulator', '--port', String(port), '--data', path.join(dirs.emu, 'emulator.sqlite')], {
    logFile: path.join(dirs.logs, 'emulator.log'),
  });
  const configFile = path.join(work, 'gridsync.yaml');
  writeConfig(configFile, { url, dirs, pollMs: 500, protocol: opts.protocol ?? 'rest' });
  const daemon = new Child('daemon', ['run', '-c', configFile], {
    logFile: path.join(dirs.logs, 'daemon.log'),
    env: { GRIDSYNC_LOG_PRETTY: 'false', NO_COLOR: '1' },
    ...daemonUser,
  });
  const admin = new EmulatorAdmin(url);

  const figures = {
    seed,
    chaosSeconds: opts.seconds,
    parcelsIn: 0,
    bytesIn: 0,
    filesOut: 0,
    bytesOut: 0,
    invalidOut: 0,
    duplicateOut: 0,
    slowWrites: 0,
    pausedSlowWrites: 0,
    kills: { SIGKILL: 0, SIGTERM: 0 },
    outages: 0,
    diskFullEpisodes: 0,
    unwritableEpisodes: 0,
    faultsInjected: {},
    maxRssMb: 0,
    rssSamples: [],
    lost: null,
    duplicated: null,
    drainMs: null,
    notices,
    violations: [],
  };

  // --- start the emulator and the daemon
  let emuStarts = 0;
  const startEmulator = async () => {
    const before = emuStarts++;
    emulator.start();
    await waitForLine(
      emulator.logFile,
      new RegExp(`(listening on http://127\\.0\\.0\\.1:${port}[^\\n]*\\n[\\s\\S]*){${before + 1}}`),
      20_000,
    );
  };
  let stop = false;
  try {
    await startEmulator();
    daemon.start();

    const inbound = new Map(); // parcelId → { sha, bytes, name }
    // fileName → { sha, bytes, kind: 'valid'|'invalid'|'duplicate'|'paused' }; 'paused': a slow write
    // whose writer stalled for stableMs or more (prefixOf: its whole content).
    const outbound = new Map();
    const loops = [];
    const every = (fn) =>
      loops.push(
        (async () => {
          while (!stop) {
            try {
              await fn();
            } catch (err) {
              if (!stop) log(`loop error (tolerated while the service is down): ${err.message}`);
              await sleep(200);
            }
          }
        })(),
      );

    const oddNames = [
      'invoice.x12',
      'invoice.x12',
      '../../escape.x12',
      '/etc/passwd',
      'a\\b.edi',
      'CON',
      'nul.txt',
      'line\nbreak.x12',
      'Ünïcödé-名前.edi',
      'x'.repeat(300) + '.x12',
      '',
      '.hidden',
      'trailing. ',
      'ORDERS.edi',
    ];
    let controlSeq = rnd.int(1000, 9000) * 1000;

    // Partner: inbound parcels, sizes from 0 bytes to several MB, odd and colliding names.
    every(async () => {
      await sleep(rnd.int(50, 400));
      const kind = rnd.pick(['x12', 'edifact', 'binary', 'tiny']);
      const size = kind === 'tiny' ? rnd.int(0, 20) : rnd.chance(0.05) ? rnd.int(1, maxParcelBytes) : rnd.int(100, 20_000);
      const content =
        kind === 'x12'
          ? Buffer.from(x12Interchange(++controlSeq, size, rnd))
          : kind === 'edifact'
            ? Buffer.from(edifactInterchange(++controlSeq, size, rnd))
            : Buffer.concat([rnd.bytes(size), Buffer.from(`#${++controlSeq}`)]);
      const fileName = rnd.chance(0.4)
        ? rnd.pick(oddNames)
        : `in-${controlSeq}.${kind === 'binary' ? 'bin' : kind === 'edifact' ? 'edi' : 'x12'}`;
      const r = await admin.inject({ mailboxId: OUR_MAILBOX, fileName, content: content.toString('base64') });
      const parcelId = typeof r === 'object' ? r.parcelId : r;
      inbound.set(Number(parcelId), { sha: sha256(content), bytes: content.length, name: fileName });
      figures.parcelsIn++;
      figures.bytesIn += content.length;
    });

    // ERP producer: outbound files — some written slowly in pieces, some invalid, some duplicates.
    const sentContents = [];
    let outSeq = 0;
    every(async () => {
      await sleep(rnd.int(100, 600));
      const seq = ++outSeq;
      const roll = rnd.next();
      let content;
      let kind = 'valid';
      if (roll < 0.06) {
        kind = 'invalid';
        content = Buffer.from(x12Interchange(++controlSeq, rnd.int(200, 3000), rnd)).subarray(0, rnd.int(120, 180));
      } else if (roll < 0.09) {
        kind = 'invalid';
        content = Buffer.alloc(0);
      } else if (roll < 0.12 && sentContents.length > 0) {
        // Same bytes as a file sent at least 10 s ago: the duplicate-content check must reject it.
        const old = sentContents.find((s) => Date.now() - s.at > 10_000);
        if (!old) return;
        kind = 'duplicate';
        content = old.content;
      } else {
        const size = rnd.chance(0.05) ? rnd.int(100_000, maxParcelBytes) : rnd.int(200, 20_000);
        content = Buffer.from(rnd.chance(0.5) ? x12Interchange(++controlSeq, size, rnd) : edifactInterchange(++controlSeq, size, rnd));
      }
      const fileName = `out-${seq}.${content.toString('latin1', 0, 3) === 'ISA' ? 'x12' : 'edi'}`;
      const target = path.join(dirs.outbox, fileName);
      outbound.set(fileName, { sha: sha256(content), bytes: content.length, kind });
      if (kind === 'valid' && content.length > 3000 && rnd.chance(0.3)) {
        // Written slowly in pieces, each gap well inside stableMs: never claimed half-written.
        figures.slowWrites++;
        const fd = fs.openSync(target, 'w', 0o644);
        const pieces = 4;
        const step = Math.ceil(content.length / pieces);
        let longestGapMs = 0;
        let wroteAt = 0;
        for (let i = 0; i < pieces; i++) {
          // The gap is measured, not assumed: on a loaded machine this process can stall for longer
          // than its sleep, and a pause of stableMs makes the half-written file finished by contract.
          if (i > 0) longestGapMs = Math.max(longestGapMs, performance.now() - wroteAt);
          fs.writeSync(fd, content.subarray(i * step, (i + 1) * step));
          wroteAt = performance.now();
          if (i < pieces - 1) await sleep(STABLE_MS / 4);
        }
        fs.closeSync(fd);
        if (longestGapMs >= STABLE_MS) {
          // The daemon may have claimed a prefix (the envelope check then refuses it) or the whole:
          // either way, exactly once, and never a prefix sent. Counted and logged, not hidden.
          figures.pausedSlowWrites++;
          outbound.set(fileName, { ...outbound.get(fileName), kind: 'paused', prefixOf: content });
          log(
            `the slow writer of ${fileName} paused ${Math.round(longestGapMs)} ms (stableMs ${STABLE_MS}): its file may be claimed half-written`,
          );
        }
      } else {
        // The ERP's usual atomic drop: write a temp name, rename into place.
        const tmp = path.join(dirs.outbox, `${fileName}.tmp`);
        fs.writeFileSync(tmp, content, { mode: 0o644 });
        fs.renameSync(tmp, target);
      }
      if (daemonUser) fs.chownSync(target, daemonUser.uid, daemonUser.gid);
      if (outbound.get(fileName)?.kind === 'paused') figures.filesOut++;
      else if (kind === 'valid') {
        sentContents.push({ content, at: Date.now() });
        if (sentContents.length > 50) sentContents.shift();
        figures.filesOut++;
        figures.bytesOut += content.length;
      } else if (kind === 'duplicate') figures.duplicateOut++;
      else figures.invalidOut++;
    });

    // ERP consumer: takes complete files (their done marker is present) out of the inbox.
    const consumed = []; // { sha, mode }
    let consumedSeq = 0;
    const consumeInbox = async () => {
      for (const file of await walk(dirs.inbox)) {
        if (file.endsWith('.done') || !fs.existsSync(`${file}.done`)) continue;
        let st;
        try {
          st = fs.statSync(file);
        } catch {
          continue;
        }
        const content = fs.readFileSync(file);
        const dest = path.join(dirs.consumed, `${++consumedSeq}-${path.basename(file).slice(0, 100)}`);
        fs.writeFileSync(dest, content);
        fs.unlinkSync(file);
        fs.unlinkSync(`${file}.done`);
        consumed.push({ sha: sha256(content), mode: st.mode & 0o777, rel: path.relative(dirs.inbox, file) });
      }
    };
    every(async () => {
      await sleep(500);
      await consumeInbox();
    });

    // RSS sampler.
    every(async () => {
      await sleep(1000);
      const rss = daemon.rssMb();
      if (rss > 0) {
        figures.rssSamples.push(Math.round(rss));
        figures.maxRssMb = Math.max(figures.maxRssMb, Math.round(rss));
      }
    });

    // Chaos: faults on every endpoint, kills, outages, disk full, unwritable inbox.
    // Fault counters live in the emulator process: add them up before each restart.
    const addFaults = (f) => {
      for (const [k, v] of Object.entries(f?.injected ?? {})) figures.faultsInjected[k] = (figures.faultsInjected[k] ?? 0) + v;
    };
    const faultConfig = {
      seed,
      rules: [
        {
          endpoint: '*',
          rate429: 0.03,
          retryAfterSeconds: 1,
          rate500: 0.03,
          rate503: 0.03,
          latencyMs: [0, 150],
          resetBeforeRate: 0.02,
          resetAfterRate: 0.02,
          resetDuringBodyRate: 0.02,
          truncateRate: 0.02,
        },
      ],
    };
    await admin.setFaults(faultConfig);
    const chaosStart = Date.now();
    // Every kind of fault happens at least once (a seeded order first), then at random.
    const kinds = ['sigkill', 'outage', 'diskfull', 'unwritable', 'sigterm', 'sigkill'];
    for (let i = kinds.length - 1; i > 0; i--) {
      const j = rnd.int(0, i);
      [kinds[i], kinds[j]] = [kinds[j], kinds[i]];
    }
    const nextKind = () => kinds.shift() ?? rnd.pick(['sigkill', 'sigkill', 'sigkill', 'sigterm', 'outage', 'diskfull', 'unwritable']);
    const chaos = (async () => {
      const gap = Math.max(1500, Math.min(6000, chaosMs / 10));
      while (Date.now() - chaosStart < chaosMs) {
        await sleep(rnd.int(gap / 2, gap));
        if (Date.now() - chaosStart >= chaosMs) break;
        const kind = nextKind();
        if (kind === 'sigkill' || kind === 'sigterm') {
          const sig = kind === 'sigterm' ? 'SIGTERM' : 'SIGKILL';
          if (await daemon.kill(sig)) figures.kills[sig]++;
          await sleep(rnd.int(100, 1000));
          daemon.start();
        } else if (kind === 'outage') {
          figures.outages++;
          addFaults(await admin.faults().catch(() => null));
          log('outage: emulator stopped');
          await emulator.kill(rnd.chance(0.5) ? 'SIGKILL' : 'SIGTERM');
          await sleep(rnd.int(1000, 4000));
          await startEmulator();
          await admin.setFaults(faultConfig);
          log('outage over');
        } else if (kind === 'diskfull' && tmpfsMounted) {
          figures.diskFullEpisodes++;
          const filler = path.join(dirs.mount, 'filler');
          const free = fs.statfsSync(dirs.mount);
          const bytes = Math.max(0, free.bavail * free.bsize - 16 * 1024);
          const fd = fs.openSync(filler, 'w');
          try {
            const chunk = Buffer.alloc(1024 * 1024);
            let left = bytes;
            while (left > 0) left -= fs.writeSync(fd, chunk, 0, Math.min(chunk.length, left));
          } catch (err) {
            if (err.code !== 'ENOSPC') throw err;
          } finally {
            // An open descriptor would keep the deleted filler's space allocated (found by a failed run).
            fs.closeSync(fd);
          }
          log('disk full');
          await sleep(rnd.int(1500, 4000));
          fs.rmSync(filler, { force: true });
          log('disk freed');
        } else if (kind === 'unwritable' && daemonUser) {
          figures.unwritableEpisodes++;
          fs.chmodSync(dirs.inbox, 0o555);
          log('inbox unwritable');
          await sleep(rnd.int(1500, 4000));
          fs.chmodSync(dirs.inbox, 0o755);
          log('inbox writable again');
        }
      }
    })();
    await chaos;

    // Quiet period: no more faults or new work; let everything drain and check.
    stop = true;
    await Promise.allSettled(loops);
    await admin.setFaults({ seed, rules: [] });
    addFaults(await admin.faults().catch(() => null));
    if (!daemon.running) daemon.start();
    const drainFrom = Date.now();
    log(`chaos over; ${figures.parcelsIn} parcels in, ${figures.filesOut + figures.invalidOut + figures.duplicateOut} files out; draining`);

    let verdict;
    const drainDeadline = Date.now() + drainTimeoutMs;
    for (;;) {
      await consumeInbox();
      verdict = await checkInvariants({ admin, dirs, inbound, outbound, consumed });
      if (verdict.ok || Date.now() > drainDeadline) break;
      await sleep(1000);
    }
    figures.drainMs = Date.now() - drainFrom;

    // Shut the daemon down gracefully: a clean SIGTERM exit is part of the contract.
    const term = await daemon.kill('SIGTERM', 20_000);
    if (term && term.code !== 0) verdict.violations.push(`daemon exited ${JSON.stringify(term)} on the final SIGTERM`);
    await emulator.kill('SIGTERM');

    // Journal integrity after everything (the daemon is stopped, so no lock).
    const journalFile = findJournal(dirs.state);
    if (journalFile) {
      const { default: Database } = await import('better-sqlite3');
      const db = new Database(journalFile, { readonly: true });
      const ic = db.pragma('integrity_check', { simple: true });
      db.close();
      if (ic !== 'ok') verdict.violations.push(`journal integrity_check: ${ic}`);
    } else verdict.violations.push(`no journal found under ${dirs.state}`);

    // Security: secrets never in logs; files written with the configured mode.
    const daemonLog = fs.readFileSync(daemon.logFile, 'utf8');
    if (daemonLog.includes(API_KEY)) verdict.violations.push('the API key appears in the daemon log');
    if (/Bearer\s+[A-Za-z0-9._-]{8,}/.test(daemonLog)) verdict.violations.push('a bearer token appears in the daemon log');
    const wrongMode = consumed.filter((c) => c.mode !== INBOX_FILE_MODE);
    if (wrongMode.length)
      verdict.violations.push(
        `${wrongMode.length} inbox files without mode ${INBOX_FILE_MODE.toString(8)} (e.g. ${wrongMode[0].mode.toString(8)})`,
      );
    verdict.violations.push(...(await securityChecks(work)));

    for (const child of [daemon, emulator])
      if (child.spawnErrors.length) verdict.violations.push(`the ${child.name} failed to start: ${child.spawnErrors.join(', ')}`);
    figures.lost = verdict.lost;
    figures.duplicated = verdict.duplicated;
    figures.violations = verdict.violations;
    const samples = figures.rssSamples;
    delete figures.rssSamples;
    figures.rssMbFirstThird = median(samples.slice(0, Math.floor(samples.length / 3)));
    figures.rssMbLastThird = median(samples.slice(Math.floor((2 * samples.length) / 3)));
    figures.daemonStarts = daemon.exits.length;
    figures.artefacts = work;

    if (tmpfsMounted) {
      try {
        // Keep the artefacts: copy the mount's content out before unmounting.
        fs.cpSync(dirs.mount, path.join(work, 'fs-copy'), { recursive: true });
        execFileSync('umount', [dirs.mount]);
      } catch (err) {
        notices.push(`umount failed: ${err.message}`);
      }
    }
    return figures;
  } catch (err) {
    // A run that breaks off (a child that never came up) must not leave children or a mount behind.
    stop = true;
    await daemon.kill('SIGKILL');
    await emulator.kill('SIGKILL');
    if (tmpfsMounted) spawnSync('umount', [dirs.mount]);
    throw err;
  }
}

function median(xs) {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function findJournal(stateDir) {
  if (!fs.existsSync(stateDir)) return null;
  const f = fs.readdirSync(stateDir).find((n) => /\.(sqlite|db)$/.test(n) && !n.includes('.lock'));
  return f ? path.join(stateDir, f) : null;
}

/**
 * The invariants of issue #7 against the emulator's records and the folders. Returns the counts of
 * lost and duplicated items and every violation, so that a drain loop can poll it until it holds.
 */
async function checkInvariants({ admin, dirs, inbound, outbound, consumed }) {
  const violations = [];
  let lost = 0;
  let duplicated = 0;
  const parcels = await admin.parcels(OUR_MAILBOX);
  const list = Array.isArray(parcels) ? parcels : (parcels.parcels ?? []);

  // Inbound: every parcel sent to us (injected or a 997 from the partner) placed exactly once, confirmed.
  const incoming = list.filter((p) => p.direction === 'in' || /^InBox/.test(p.status ?? p.parcelStatus ?? ''));
  const want = new Map();
  for (const p of incoming) {
    const status = p.status ?? p.parcelStatus;
    if (status !== 'InBoxTransferred') violations.push(`inbound parcel ${p.parcelId} is ${status}, not confirmed`);
    const sha = p.sha256 ?? inbound.get(Number(p.parcelId))?.sha;
    want.set(sha, (want.get(sha) ?? 0) + 1);
  }
  for (const [id] of inbound) {
    if (!incoming.some((p) => Number(p.parcelId) === id)) violations.push(`injected parcel ${id} unknown to the emulator`);
  }
  const have = new Map();
  for (const c of consumed) have.set(c.sha, (have.get(c.sha) ?? 0) + 1);
  for (const f of await walk(dirs.inbox)) {
    if (f.endsWith('.done')) continue;
    const sha = sha256(fs.readFileSync(f));
    have.set(sha, (have.get(sha) ?? 0) + 1);
  }
  for (const [sha, n] of want) {
    const got = have.get(sha) ?? 0;
    if (got < n) lost += n - got;
    if (got > n) duplicated += got - n;
  }
  for (const [sha, n] of have)
    if (!want.has(sha)) {
      duplicated += n;
      violations.push(`a file in the inbox matches no inbound parcel (sha ${sha.slice(0, 12)})`);
    }

  // Outbound: every valid file uploaded exactly once and archived once; invalid/duplicates in errorDir with a reason.
  const uploads = new Map();
  for (const p of list) {
    if (p.direction === 'out' || /^OutBox/.test(p.status ?? p.parcelStatus ?? ''))
      uploads.set(p.fileName, [...(uploads.get(p.fileName) ?? []), p]);
  }
  const sentFiles = await walk(dirs.sent);
  const sentShas = new Map();
  for (const f of sentFiles) {
    const sha = sha256(fs.readFileSync(f));
    sentShas.set(sha, (sentShas.get(sha) ?? 0) + 1);
  }
  const errorFiles = new Set((await walk(dirs.error)).map((f) => path.basename(f)));
  for (const [name, o] of outbound) {
    const ups = uploads.get(name) ?? [];
    if (o.kind === 'valid') {
      if (ups.length === 0) lost++;
      if (ups.length > 1) {
        duplicated += ups.length - 1;
        violations.push(`${name} uploaded ${ups.length} times`);
      }
      const bad = ups.find((u) => (u.sha256 && u.sha256 !== o.sha) || (u.bytes !== undefined && Number(u.bytes) !== o.bytes));
      if (bad) violations.push(`${name} uploaded with different content (${bad.bytes} bytes vs ${o.bytes})`);
    } else if (o.kind === 'paused') {
      // Whole, once (checked like a valid file), or refused as the prefix it was when claimed.
      if (ups.length > 1) {
        duplicated += ups.length - 1;
        violations.push(`${name} uploaded ${ups.length} times`);
      }
      const bad = ups.find((u) => (u.sha256 && u.sha256 !== o.sha) || (u.bytes !== undefined && Number(u.bytes) !== o.bytes));
      if (bad) violations.push(`${name} (paused slow write) uploaded with different content (${bad.bytes} bytes vs ${o.bytes})`);
      if (ups.length === 0) {
        const refused = path.join(dirs.error, name);
        const prefix = fs.existsSync(refused) ? fs.readFileSync(refused) : undefined;
        if (!prefix || !errorFiles.has(`${name}.error.json`)) {
          lost++;
          violations.push(`paused slow write ${name} neither uploaded nor in errorDir with its .error.json`);
        } else if (prefix.length >= o.bytes || !o.prefixOf.subarray(0, prefix.length).equals(prefix))
          violations.push(`paused slow write ${name} in errorDir is not a prefix of what was written`);
      }
    } else {
      if (ups.length > 0) violations.push(`${o.kind} file ${name} was uploaded`);
      if (!errorFiles.has(name) || !errorFiles.has(`${name}.error.json`)) {
        lost++;
        violations.push(`${o.kind} file ${name} not in errorDir with its .error.json`);
      }
    }
  }
  const validShas = new Map();
  for (const [name, o] of outbound)
    if (o.kind === 'valid' || (o.kind === 'paused' && uploads.has(name))) validShas.set(o.sha, (validShas.get(o.sha) ?? 0) + 1);
  for (const [sha, n] of validShas) {
    const got = sentShas.get(sha) ?? 0;
    if (got !== n) violations.push(`sentDir holds ${got} copies of a file dropped ${n} time(s) (sha ${sha.slice(0, 12)})`);
  }
  for (const f of await walk(dirs.outbox)) violations.push(`left in the outbox: ${path.basename(f)}`);
  for (const f of [...(await walk(dirs.staging)), ...(await walk(path.join(dirs.state, 'processing')))]) violations.push(`leftover ${f}`);
  for (const name of errorFiles) {
    if (!name.endsWith('.error.json')) continue;
    try {
      const reason = JSON.parse(fs.readFileSync(path.join(dirs.error, name), 'utf8'));
      if (!reason.reason) violations.push(`${name} has no reason`);
    } catch (err) {
      violations.push(`${name} unreadable: ${err.message}`);
    }
  }
  const ok = violations.length === 0 && lost === 0 && duplicated === 0;
  return { ok, lost, duplicated, violations };
}

/** Issue #7 item 4: plain http to a non-loopback host refused; TLS verification on by default. */
async function securityChecks(work) {
  const violations = [];
  // A self-signed https server on loopback: `gridsync call` must refuse its certificate.
  try {
    const tls = selfSignedCert(work);
    if (!tls) throw new Error('openssl not found');
    const { default: https } = await import('node:https');
    const server = https.createServer(tls, (_req, res) => res.end('{"success":true,"data":{"version":"2.6"}}'));
    await new Promise((r) => server.listen(0, '127.0.0.1', () => r(undefined)));
    const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
    const r = await new Promise((resolve) => {
      const c = spawn(
        process.execPath,
        [cliPath, 'call', 'GET', '/v2/auth/version', '--base-url', `https://127.0.0.1:${port}`, '--api-key', 'x'],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let out = '';
      c.stdout.on('data', (d) => (out += d));
      c.stderr.on('data', (d) => (out += d));
      c.on('exit', (code) => resolve({ code, out }));
    });
    server.close();
    if (r.code === 0 || !/certificate|SELF_SIGNED|self.signed/i.test(r.out))
      violations.push(`a self-signed certificate was not refused (exit ${r.code}): ${r.out.slice(0, 200)}`);
  } catch (err) {
    violations.push(`TLS check could not run: ${err.message}`);
  }
  const cfg = path.join(work, 'insecure.yaml');
  fs.writeFileSync(
    cfg,
    `api:\n  baseUrl: http://192.0.2.10:8080\n  apiKey: x\nstateDir: ${path.join(work, 'insecure-state')}\nmailboxes:\n  - mailboxId: 1\n    inbox: { dir: ${path.join(work, 'insecure-inbox')} }\n`,
  );
  const r = spawnSync(process.execPath, [cliPath, 'once', '-c', cfg], { encoding: 'utf8', timeout: 30_000 });
  if (r.status !== 2 || !/insecure|https|plain http/i.test(r.stderr + r.stdout)) {
    violations.push(`plain http to a non-loopback host was not refused clearly (exit ${r.status}): ${(r.stderr + r.stdout).slice(0, 300)}`);
  }
  return violations;
}

// ---------------------------------------------------------------- CLI

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const args = process.argv.slice(2);
  const arg = (name, dflt) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? args[i + 1] : dflt;
  };
  if (args.includes('--help')) {
    console.log('usage: npm run soak -- [--minutes N] [--seed S] [--out FILE] [--protocol rest|soap]');
    process.exit(0);
  }
  const minutes = Number(arg('minutes', '5'));
  const out = arg('out', path.join(repoRoot, 'bench', 'results', 'soak-latest.json'));
  const report = await runSoak({
    seconds: Math.round(minutes * 60),
    seed: arg('seed') ? Number(arg('seed')) : undefined,
    protocol: arg('protocol', 'rest'),
  });
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, JSON.stringify(report, null, 2));
  console.log(JSON.stringify(report));
  console.log(`report written to ${out}`);
  process.exit(report.lost === 0 && report.duplicated === 0 && report.violations.length === 0 ? 0 : 1);
}
