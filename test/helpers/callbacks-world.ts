// A real emulator process and real `gridsync run` processes with a callback receiver on 127.0.0.1
// over TLS with a self-signed certificate made here (openssl), for the callback tests and the bench.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { afterAll, beforeAll } from 'vitest';
import { selfSignedCert } from './tls.mjs';
import { startCli, type CliChild } from './daemon-child.js';

export interface CallbackWorld {
  readonly dir: string;
  readonly emuUrl: string;
  readonly certFile: string;
  readonly keyFile: string;
  emu(method: string, p: string, body?: unknown, key?: string): Promise<{ status: number; data: unknown }>;
  inject(fileName: string, content: string, mailboxId?: number): Promise<number>;
  faults(rules: object[], seed?: number): Promise<void>;
  close(): Promise<void>;
}

export async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

export async function startWorld(): Promise<CallbackWorld> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-cbw-'));
  if (!selfSignedCert(dir)) throw new Error('openssl is needed for the callback tests');
  const emuChild = startCli(['emulator', '--port', '0', '--data', path.join(dir, 'emu.sqlite')]);
  const emuUrl = (await emuChild.waitFor(/listening on (http:\/\/\S+)/))[1] as string;
  const emu = async (method: string, p: string, body?: unknown, key = 'demo-key-1001') => {
    const res = await fetch(emuUrl + p, {
      method,
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const j = (await res.json()) as { data?: unknown };
    return { status: res.status, data: j.data ?? j };
  };
  return {
    dir,
    emuUrl,
    certFile: path.join(dir, 'cert.pem'),
    keyFile: path.join(dir, 'key.pem'),
    emu,
    inject: async (fileName, content, mailboxId = 1001) => {
      const r = await emu('POST', '/_emulator/inject', { mailboxId, fileName, content: Buffer.from(content).toString('base64') });
      return (r.data as { parcelId: number }).parcelId;
    },
    faults: async (rules, seed = 7) => {
      await emu('POST', '/_emulator/faults', { seed, rules });
    },
    close: async () => {
      emuChild.kill('SIGTERM');
      await emuChild.exited;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * One world for the whole test file: started before its first test, closed after its last. What it
 * returns stands for that world in the file's tests (it reads the started one).
 */
export function callbackWorldForFile(): CallbackWorld {
  let started: CallbackWorld | undefined;
  beforeAll(async () => {
    started = await startWorld();
  }, 60_000);
  afterAll(async () => {
    await started?.close();
  });
  const world = (): CallbackWorld => {
    if (!started) throw new Error('the callback world starts in beforeAll: use it inside a test');
    return started;
  };
  return {
    get dir() {
      return world().dir;
    },
    get emuUrl() {
      return world().emuUrl;
    },
    get certFile() {
      return world().certFile;
    },
    get keyFile() {
      return world().keyFile;
    },
    emu: (...args) => world().emu(...args),
    inject: (...args) => world().inject(...args),
    faults: (...args) => world().faults(...args),
    close: () => world().close(),
  };
}

export interface DaemonHandle {
  readonly child: CliChild;
  readonly inbox: string;
  readonly metricsUrl: string;
  stop(): Promise<void>;
}

export interface DaemonOptions {
  readonly poll: string;
  /** false: polling only. */
  readonly callbacks?: { port: number; publicUrl?: string; auth?: 'basic' | 'digest' } | false;
  /** `soap`: the daemon talks SOAP to the emulator (default rest). */
  readonly protocol?: 'rest' | 'soap';
  readonly mailboxId?: number;
  /** A fixed port for /readyz and /metrics (default: any free one). */
  readonly httpPort?: number;
}

/** Writes the config of a daemon in `name` under the world; returns its path. */
export function writeConfig(w: CallbackWorld, name: string, o: DaemonOptions): string {
  const base = path.join(w.dir, name);
  fs.mkdirSync(base, { recursive: true });
  const config = {
    api: { baseUrl: w.emuUrl, apiKey: `demo-key-${o.mailboxId ?? 1001}`, ...(o.protocol ? { protocol: o.protocol } : {}) },
    stateDir: './state',
    log: { level: 'info', pretty: false },
    http: { enabled: true, port: o.httpPort ?? 0 },
    schedule: { poll: o.poll },
    ...(o.callbacks
      ? {
          callbacks: {
            listen: `127.0.0.1:${o.callbacks.port}`,
            publicUrl: o.callbacks.publicUrl ?? `https://127.0.0.1:${o.callbacks.port}/gridsync/callbacks`,
            tls: { certFile: w.certFile, keyFile: w.keyFile },
            ...(o.callbacks.auth ? { auth: o.callbacks.auth } : {}),
          },
        }
      : {}),
    mailboxes: [{ mailboxId: o.mailboxId ?? 1001, inbox: { dir: './inbox' } }],
  };
  const file = path.join(base, 'gridsync.yaml');
  // It holds the API key: kept as an operator keeps it (0644 is warned about on stderr).
  fs.writeFileSync(file, YAML.stringify(config), { mode: 0o600 });
  return file;
}

/** Starts `gridsync run` in `name` under the world. */
export async function startDaemon(w: CallbackWorld, name: string, o: DaemonOptions): Promise<DaemonHandle> {
  const file = writeConfig(w, name, o);
  const base = path.dirname(file);
  const child = startCli(['run', '-c', file]);
  const metricsUrl = (await child.waitFor(/"url":"(http:\/\/[^"]+)"[^\n]*health and metrics endpoint listening/))[1] as string;
  if (o.callbacks) await child.waitFor(/callback registered/);
  return {
    child,
    inbox: path.join(base, 'inbox'),
    metricsUrl,
    stop: async () => {
      child.kill('SIGTERM');
      await child.exited;
    },
  };
}

/** One sample of a Prometheus series from /metrics (0 when absent). */
export async function metric(d: DaemonHandle, series: string): Promise<number> {
  const text = await (await fetch(`${d.metricsUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.split(' ')[1]) : 0;
}

/** Files in the inbox (nothing hidden, no staging). */
export function inboxFiles(d: DaemonHandle): string[] {
  try {
    return fs.readdirSync(d.inbox).filter((f) => !f.startsWith('.'));
  } catch {
    return [];
  }
}
