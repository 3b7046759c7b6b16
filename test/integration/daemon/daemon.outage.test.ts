// The service goes away and comes back: the daemon (in-process, real emulator over 127.0.0.1,
// real journal and folders) never crashes, /readyz flips to 503 and back, and transfers resume
// without a restart. Also: a daemon started while the service is down waits, then connects.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/index.js';
import { Daemon } from '../../../src/daemon/index.js';
import type { Timers } from '../../../src/daemon/scheduler.js';
import { startEmulator, type Emulator } from '@gridsync/emulator';
import { silentLogger } from '../../../src/log.js';
import { eventually } from '../../helpers/daemon-child.js';

// Real timers, ten times faster: backoff delays of seconds become a few hundred ms.
const fastTimers: Timers = { set: (fn, ms) => setTimeout(fn, ms / 10), clear: (h) => clearTimeout(h as NodeJS.Timeout) };
const fastSleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms / 10);
    signal?.addEventListener('abort', () => (clearTimeout(t), reject(new Error('aborted'))), { once: true });
  });

describe('daemon: service outage', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  function setup(port: number, mailboxId: number | null = 1001) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-outage-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const loaded = parseConfig(
      {
        api: { baseUrl: `http://127.0.0.1:${port}`, apiKey: 'demo-key-1001', maxAttempts: 1, timeouts: { connectMs: '500ms' } },
        stateDir: 'state',
        http: { enabled: true, port: 0 },
        schedule: { poll: '100ms' },
        shutdownTimeout: '5s',
        mailboxes: [{ ...(mailboxId !== null ? { mailboxId } : {}), inbox: { dir: 'inbox' } }],
      },
      'outage-test',
      {},
      dir,
    );
    return { dir, loaded, inbox: path.join(dir, 'inbox'), dataFile: path.join(dir, 'emulator.sqlite') };
  }

  async function freePort(): Promise<number> {
    const e = await startEmulator({ port: 0 });
    const port = Number(new URL(e.url).port);
    await e.close();
    return port;
  }

  const status = async (url: string, p: string): Promise<number> => (await fetch(`${url}${p}`)).status;
  const files = (dir: string): string[] =>
    fs.existsSync(dir)
      ? fs
          .readdirSync(dir)
          .filter((f) => !f.startsWith('.'))
          .sort()
      : [];

  it('down for a while, then back: unready meanwhile, recovers by itself', async () => {
    const port = await freePort();
    const w = setup(port);
    let emu: Emulator = await startEmulator({ port, dataFile: w.dataFile });
    cleanups.push(() => emu.close());
    const daemon = await Daemon.open({
      loaded: w.loaded,
      logger: silentLogger,
      waitForService: true,
      serveHttp: true,
      timers: fastTimers,
      sleep: fastSleep,
    });
    cleanups.push(() => daemon.close());
    await daemon.start();
    const url = daemon.httpUrl as string;
    await eventually(async () => (await status(url, '/readyz')) === 200, 10_000, 'ready');

    await emu.inject({ mailboxId: 1001, fileName: 'before.x12', content: Buffer.from('ISA*before~') });
    await eventually(() => files(w.inbox).includes('before.x12'), 10_000, 'before.x12 delivered');

    await emu.close();
    await eventually(async () => (await status(url, '/readyz')) === 503, 10_000, '/readyz 503 while the service is down');
    const body = (await (await fetch(`${url}/readyz`)).json()) as { ready: boolean; lastError: string | null };
    expect(body.ready).toBe(false);
    expect(body.lastError).toBeTruthy();
    expect(await status(url, '/healthz')).toBe(200); // alive, just not ready
    expect(await (await fetch(`${url}/metrics`)).text()).toMatch(/gridsync_service_reachable 0/);

    emu = await startEmulator({ port, dataFile: w.dataFile });
    await emu.inject({ mailboxId: 1001, fileName: 'after.x12', content: Buffer.from('ISA*after~') });
    await eventually(() => files(w.inbox).includes('after.x12'), 15_000, 'after.x12 delivered after the outage');
    await eventually(async () => (await status(url, '/readyz')) === 200, 10_000, '/readyz 200 again');
    expect(files(w.inbox)).toEqual(['after.x12', 'before.x12']);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/gridsync_transfers_total\{direction="in",mailbox="mb1001"\} 2/);

    await daemon.close();
    await daemon.close(); // safe twice
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  });

  it('started while the service is down, without a configured mailbox id: waits (unready), connects when it appears; close() stops the wait', async () => {
    const port = await freePort();
    const w = setup(port, null);
    const opening = Daemon.open({
      loaded: w.loaded,
      logger: silentLogger,
      waitForService: true,
      serveHttp: true,
      timers: fastTimers,
      sleep: fastSleep,
    });
    await new Promise((r) => setTimeout(r, 300));
    const emu = await startEmulator({ port, dataFile: w.dataFile });
    cleanups.push(() => emu.close());
    const daemon = await opening;
    cleanups.push(() => daemon.close());
    const url = daemon.httpUrl as string;
    expect(await status(url, '/readyz')).toBe(503); // not started yet
    await daemon.start();
    await eventually(async () => (await status(url, '/readyz')) === 200, 10_000, 'ready after connecting');

    // Without a service and with an abort (SIGTERM in `run`), open() gives up promptly.
    const port2 = await freePort();
    const w2 = setup(port2, null);
    const stop = new AbortController();
    const waiting = Daemon.open({ loaded: w2.loaded, logger: silentLogger, waitForService: true, signal: stop.signal, sleep: fastSleep });
    setTimeout(() => stop.abort(), 200);
    await expect(waiting).rejects.toThrow(/stopped before the service became reachable|not reachable/);
  });

  it('once (no waiting), no configured mailbox id: an unreachable service is a StartupError saying so', async () => {
    const w = setup(await freePort(), null);
    await expect(Daemon.open({ loaded: w.loaded, logger: silentLogger, waitForService: false })).rejects.toMatchObject({
      code: 'STARTUP_UNREACHABLE',
      message: expect.stringMatching(/not reachable/),
    });
  });

  it('with the mailbox id configured, a service that cannot be reached at start-up is a warning: syncing starts and delivers once it appears', async () => {
    const port = await freePort();
    const w = setup(port);
    const daemon = await Daemon.open({
      loaded: w.loaded,
      logger: silentLogger,
      waitForService: true,
      serveHttp: true,
      timers: fastTimers,
      sleep: fastSleep,
    });
    cleanups.push(() => daemon.close());
    await daemon.start();
    const emu = await startEmulator({ port, dataFile: w.dataFile });
    cleanups.push(() => emu.close());
    await emu.inject({ mailboxId: 1001, fileName: 'late.x12', content: Buffer.from('ISA*late~') });
    await eventually(() => files(w.inbox).includes('late.x12'), 15_000, 'late.x12 delivered');
  });
});

describe('daemon: credentials revoked while running', () => {
  it('never crashes: cycles fail with 401, /readyz 503, retries; recovers when the key is valid again', async () => {
    const Database = (await import('better-sqlite3')).default;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-revoked-'));
    const dataFile = path.join(dir, 'emulator.sqlite');
    const emu = await startEmulator({ port: 0, dataFile });
    // The emulator implements no key revocation route: revoke in its store, as its operator would.
    const store = new Database(dataFile);
    const setKey = (from: string, to: string): void => {
      expect(store.prepare('UPDATE users SET api_key = ? WHERE api_key = ?').run(to, from).changes).toBe(1);
    };
    let daemon: Daemon | undefined;
    try {
      const loaded = parseConfig(
        {
          api: { baseUrl: emu.url, apiKey: 'demo-key-1001' },
          stateDir: 'state',
          http: { enabled: true, port: 0 },
          schedule: { poll: '100ms' },
          mailboxes: [{ mailboxId: 1001, inbox: { dir: 'inbox' } }],
        },
        'revoked-test',
        {},
        dir,
      );
      daemon = await Daemon.open({
        loaded,
        logger: silentLogger,
        waitForService: true,
        serveHttp: true,
        timers: fastTimers,
        sleep: fastSleep,
      });
      await daemon.start();
      const url = daemon.httpUrl as string;
      await eventually(async () => (await fetch(`${url}/readyz`)).status === 200, 10_000, 'ready');

      setKey('demo-key-1001', 'revoked-key');
      await eventually(async () => (await fetch(`${url}/readyz`)).status === 503, 10_000, '/readyz 503 after the key was revoked');
      const body = (await (await fetch(`${url}/readyz`)).json()) as { lastError: string };
      expect(body.lastError).toMatch(/401|Unauthori[sz]ed|key/i);
      const rejected = (): number => emu.requests().filter((r) => r.status === 401).length;
      const before = rejected();
      await eventually(() => rejected() > before, 10_000, 'another attempt (still retrying)');
      expect((await fetch(`${url}/healthz`)).status).toBe(200);

      setKey('revoked-key', 'demo-key-1001');
      await emu.inject({ mailboxId: 1001, fileName: 'after-revoke.x12', content: Buffer.from('ISA*x~') });
      await eventually(() => fs.existsSync(path.join(dir, 'inbox/after-revoke.x12')), 15_000, 'delivery once the key is valid again');
      await eventually(async () => (await fetch(`${url}/readyz`)).status === 200, 10_000, 'ready again');
    } finally {
      await daemon?.close();
      store.close();
      await emu.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
