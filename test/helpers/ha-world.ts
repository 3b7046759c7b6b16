/**
 * Several `gridsync run` instances as on separate hosts — each its own stateDir and log — sharing
 * the inbox and outbox folders, one emulator process (the service) and one PostgreSQL journal.
 * The tests are the trading partner (they inject parcels) and the ERP (they drop outbox files),
 * and the oracle: every parcel exactly once in the inbox and confirmed, every outbox file exactly
 * once on the service and in sentDir.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { DEFAULTS } from '../../src/config/defaults.js';
import { cliPath, eventually, startCli, type CliChild } from './daemon-child.js';
import { x12 } from './edi.js';
import { repoRoot } from './journal-child.js';

export const MAILBOX = 1001;
const sha = (b: Buffer | string): string => createHash('sha256').update(b).digest('hex');

export interface HaInstance {
  readonly name: string;
  readonly logFile: string;
  readonly proc: ChildProcess | undefined;
  readonly running: boolean;
  start(env?: Record<string, string>): void;
  /** Starts the instance and waits until it holds a mailbox lease (a single instance takes every one). */
  startHolding(): Promise<void>;
  kill(signal: NodeJS.Signals): Promise<void>;
  signal(signal: NodeJS.Signals): void;
  /** The JSON log lines of every run of this instance so far. */
  lines(): Record<string, unknown>[];
  /** The current run's /metrics text. */
  scrape(): Promise<string>;
  /** The current run's /readyz: its status and the error it names (status 0: not answered, yet). */
  readyz(): Promise<{ status: number; lastError: string | null }>;
}

export interface HaWorld {
  readonly dir: string;
  readonly inbox: string;
  readonly outbox: string;
  readonly sent: string;
  readonly error: string;
  readonly emulatorUrl: string;
  readonly instances: HaInstance[];
  inject(fileName: string, content: Buffer): Promise<number>;
  dropOutbox(fileName: string, content: Buffer): void;
  /** `n` parcels from the partner and `n` files from the ERP, named `<tag>-in-<k>.x12` / `<tag>-out-<k>.x12`, each interchange its own control number. */
  burst(tag: string, n: number): Promise<void>;
  setFaults(rules: unknown[]): Promise<void>;
  /** The emulator's own records of the mailbox. */
  parcels(): Promise<{ parcelId: number; status?: string; parcelStatus?: string; fileName: string; direction: string; sha256: string }[]>;
  /** What is still wrong (empty: every expectation met). */
  violations(): Promise<string[]>;
  /** Waits until nothing is wrong; fails with what still is. `alive` ends the wait early (a daemon that exited). */
  settled(timeoutMs: number, alive?: () => boolean): Promise<void>;
  close(): Promise<void>;
}

export interface HaOptions {
  readonly journalUrl: string;
  readonly instances: number;
  readonly leaseMs: number;
  readonly renewMs: number;
  readonly pollMs?: number;
  /** api.timeouts.callMs: the longest an upload lasts, which a new owner waits after a takeover. */
  readonly callMs?: number;
  /** shutdownTimeout (3 s by default). */
  readonly shutdownTimeoutMs?: number;
}

export async function startHaWorld(o: HaOptions): Promise<HaWorld> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-ha-'));
  const shared = path.join(dir, 'share');
  const d = {
    inbox: path.join(shared, 'inbox'),
    outbox: path.join(shared, 'outbox'),
    sent: path.join(shared, 'sent'),
    error: path.join(shared, 'error'),
  };
  for (const p of Object.values(d)) fs.mkdirSync(p, { recursive: true });
  const dataFile = path.join(dir, 'emulator.sqlite');
  const emulator: CliChild = startCli(['emulator', '--port', '0', '--data', dataFile]);
  const [, url] = (await emulator.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/)) as unknown as [string, string];
  const injected = new Set<number>();
  let control = 1;
  const dropped = new Map<string, string>();

  const admin = async (method: string, p: string, body?: unknown): Promise<unknown> => {
    const res = await fetch(url + p, {
      method,
      headers: body ? { 'content-type': 'application/json' } : {},
      ...(body ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(10_000),
    });
    const json = (await res.json()) as { data?: unknown };
    if (!res.ok) throw new Error(`${method} ${p} → ${res.status} ${JSON.stringify(json).slice(0, 200)}`);
    return json.data;
  };

  const instances = Array.from({ length: o.instances }, (_, i) => {
    const name = `host-${String.fromCharCode(97 + i)}`;
    const state = path.join(dir, name, 'state');
    fs.mkdirSync(state, { recursive: true });
    const configFile = path.join(dir, name, 'gridsync.yaml');
    fs.writeFileSync(
      configFile,
      YAML.stringify({
        api: { baseUrl: url, apiKey: 'demo-key-1001', timeouts: { callMs: `${o.callMs ?? 5_000}ms` } },
        stateDir: state,
        log: { level: 'info', pretty: false },
        schedule: { poll: `${o.pollMs ?? 300}ms` },
        journal: { lease: `${o.leaseMs}ms`, renew: `${o.renewMs}ms` },
        instance: { name },
        // A free port each: the tests read the lease series off /metrics.
        http: { enabled: true, port: 0 },
        shutdownTimeout: `${o.shutdownTimeoutMs ?? 3_000}ms`,
        mailboxes: [
          {
            mailboxId: MAILBOX,
            inbox: { dir: d.inbox, concurrency: 4 },
            outbox: { dir: d.outbox, sentDir: d.sent, errorDir: d.error, stableMs: '200ms', rescanMs: '500ms', duplicates: 'allow' },
          },
        ],
      }),
    );
    return haInstance(name, configFile, path.join(dir, name, 'log.jsonl'), o.journalUrl);
  });

  const world: HaWorld = {
    dir,
    ...d,
    emulatorUrl: url,
    instances,
    inject: async (fileName, content) => {
      const r = (await admin('POST', '/_emulator/inject', { mailboxId: MAILBOX, fileName, content: content.toString('base64') })) as
        { parcelId: number } | number;
      const id = Number(typeof r === 'object' ? r.parcelId : r);
      injected.add(id);
      return id;
    },
    dropOutbox: (fileName, content) => {
      // Written aside and renamed in: the daemon never sees a half-written file.
      const tmp = path.join(dir, `.${fileName}`);
      fs.writeFileSync(tmp, content);
      fs.renameSync(tmp, path.join(d.outbox, fileName));
      dropped.set(fileName, sha(content));
    },
    burst: async (tag, n) => {
      for (let k = 0; k < n; k++) {
        await world.inject(`${tag}-in-${k}.x12`, Buffer.from(x12(control++)));
        world.dropOutbox(`${tag}-out-${k}.x12`, Buffer.from(x12(control++)));
      }
    },
    setFaults: async (rules) => void (await admin('POST', '/_emulator/faults', { rules })),
    parcels: async () => (await admin('GET', `/_emulator/parcels?mailboxId=${MAILBOX}`)) as Awaited<ReturnType<HaWorld['parcels']>>,
    violations: async () => {
      const v: string[] = [];
      const list = await world.parcels();
      const inboxFiles = fs
        .readdirSync(d.inbox)
        .filter((f) => !f.startsWith('.') && !f.endsWith(DEFAULTS.inbox.doneSuffix))
        .map((f) => sha(fs.readFileSync(path.join(d.inbox, f))));
      // Parcels come from the tests and from the demo partner (its acknowledgements of our uploads).
      const incoming = list.filter((p) => p.direction === 'in' || /^InBox/.test(p.status ?? p.parcelStatus ?? ''));
      for (const id of injected.keys())
        if (!incoming.some((p) => Number(p.parcelId) === id)) v.push(`injected parcel ${id} unknown to the service`);
      for (const p of incoming) {
        const copies = inboxFiles.filter((s) => s === p.sha256).length;
        if (copies !== 1) v.push(`parcel ${p.parcelId} (${p.fileName}): ${copies} copies in the inbox`);
        const status = p.status ?? p.parcelStatus;
        if (status !== 'InBoxTransferred') v.push(`parcel ${p.parcelId} (${p.fileName}) is ${status ?? 'unknown'}, not confirmed`);
      }
      if (inboxFiles.length !== incoming.length) v.push(`${inboxFiles.length} files in the inbox for ${incoming.length} parcels`);
      const outgoing = list.filter((p) => p.direction === 'out' || /^OutBox/.test(p.status ?? p.parcelStatus ?? ''));
      const sentFiles = fs.readdirSync(d.sent).map((f) => sha(fs.readFileSync(path.join(d.sent, f))));
      for (const [name, want] of dropped) {
        const onService = outgoing.filter((p) => p.fileName === name).length;
        if (onService !== 1) v.push(`outbox file ${name}: ${onService} uploads on the service`);
        const inSent = sentFiles.filter((s) => s === want).length;
        if (inSent !== 1) v.push(`outbox file ${name}: ${inSent} copies in sentDir`);
      }
      const left = fs.readdirSync(d.outbox);
      if (left.length > 0) v.push(`still in the outbox: ${left.join(', ')}`);
      const errors = fs.readdirSync(d.error);
      if (errors.length > 0) v.push(`in errorDir: ${errors.join(', ')}`);
      return v;
    },
    settled: async (timeoutMs, alive = () => true) => {
      let last: string[] = [];
      await eventually(
        async () => {
          if (!alive()) throw new Error('the daemon exited');
          last = await world.violations();
          return last.length === 0;
        },
        timeoutMs,
        'every parcel and file delivered exactly once',
      ).catch((err: unknown) => {
        throw new Error(`not settled (${String(err)}):\n${last.join('\n')}`);
      });
    },
    close: async () => {
      for (const i of instances) await i.kill('SIGKILL');
      emulator.kill('SIGKILL');
      await emulator.exited;
      // GRIDSYNC_KEEP_HA=<folder>: the logs and folders of the run are copied there to be read.
      const keep = process.env.GRIDSYNC_KEEP_HA;
      if (keep) fs.cpSync(dir, path.join(keep, path.basename(dir)), { recursive: true });
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  return world;
}

/** The current run's /healthz, /readyz and /metrics address, from its log. */
function httpUrlOf(i: HaInstance): string {
  const url = i.lines().findLast((l) => l.msg === 'health and metrics endpoint listening')?.url;
  if (typeof url !== 'string') throw new Error(`${i.name}: no metrics endpoint in its log yet`);
  return url;
}

function haInstance(name: string, configFile: string, logFile: string, journalUrl: string): HaInstance {
  let proc: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  const running = (): boolean => proc !== undefined && proc.exitCode === null && proc.signalCode === null;
  return {
    name,
    logFile,
    get proc() {
      return proc;
    },
    get running() {
      return running();
    },
    async startHolding() {
      this.start();
      await eventually(() => this.lines().some((l) => l.msg === 'mailbox lease taken'), 20_000, `${name}: the lease taken`);
    },
    start(env = {}) {
      const fd = fs.openSync(logFile, 'a');
      proc = spawn(process.execPath, [cliPath, 'run', '-c', configFile], {
        cwd: repoRoot,
        env: { ...process.env, GRIDSYNC_JOURNAL_URL: journalUrl, ...env },
        stdio: ['ignore', fd, fd],
      });
      fs.closeSync(fd);
      const p = proc;
      exited = new Promise((r) => p.once('exit', () => r()));
    },
    async kill(signal) {
      if (!running()) return;
      proc?.kill('SIGCONT'); // a stopped process must be able to act on the signal
      proc?.kill(signal);
      const timer = setTimeout(() => proc?.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
    signal(signal) {
      if (running()) proc?.kill(signal);
    },
    async scrape() {
      return (await fetch(`${httpUrlOf(this)}/metrics`)).text();
    },
    async readyz() {
      try {
        const res = await fetch(`${httpUrlOf(this)}/readyz`, { signal: AbortSignal.timeout(5_000) });
        return { status: res.status, lastError: ((await res.json()) as { lastError: string | null }).lastError };
      } catch (err) {
        return { status: 0, lastError: String(err) };
      }
    },
    lines() {
      if (!fs.existsSync(logFile)) return [];
      return fs
        .readFileSync(logFile, 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => {
          try {
            return JSON.parse(l) as Record<string, unknown>;
          } catch {
            return {};
          }
        });
    },
  };
}

/** Whether the process is stopped (SIGSTOP, e.g. by itself at a pause point). */
export function isStopped(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return /^\d+ \(.*\) T /.test(stat);
  } catch {
    return false;
  }
}
