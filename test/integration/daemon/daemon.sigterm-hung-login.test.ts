// SIGTERM while the service holds the login of a login-and-password account and never answers.
// Every call waits for that one login, which is shared and took no caller's signal: the stop
// aborted the calls' signals, and they went on waiting for the login until its attempts ran out
// (api.timeouts.callMs each) — minutes with the defaults, until systemd or docker stop killed it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmulator } from '@gridsync/emulator';
import { eventually, startCli } from '../../helpers/daemon-child.js';
import { startHungProxy, type HangMode } from '../../helpers/hung-proxy.js';

describe.each([
  { protocol: 'rest', login: 'POST /v2/auth/login', mode: 'silent' },
  { protocol: 'soap', login: 'Login', mode: 'trickle' },
] as const)('run over $protocol: SIGTERM while the login is held ($mode)', ({ protocol, login, mode }) => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('stops within shutdownTimeout, not the login’s callMs; a second signal is not needed', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-hung-login-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const emu = await startEmulator({ port: 0 });
    cleanups.push(() => emu.close());
    const proxy = await startHungProxy(emu.url);
    cleanups.push(() => proxy.close());
    proxy.rule = (name) => (name === login ? (mode as HangMode) : undefined);
    fs.mkdirSync(path.join(dir, 'inbox'));
    const configFile = path.join(dir, 'gridsync.yaml');
    fs.writeFileSync(
      configFile,
      YAML.stringify({
        api: { baseUrl: proxy.url, protocol, login: 'erp', password: 'Demo-pass1', timeouts: { callMs: '60s' } },
        stateDir: 'state',
        log: { level: 'info', pretty: false },
        shutdownTimeout: '1s',
        mailboxes: [{ mailboxId: 1001, inbox: { dir: 'inbox' } }],
      }),
      { mode: 0o600 },
    );
    const child = startCli(['run', '-c', configFile], {}, dir);
    cleanups.push(() => child.kill('SIGKILL'));
    await eventually(() => proxy.held.length > 0, 15_000, 'the login held');
    const stoppedAt = Date.now();
    child.kill('SIGTERM');
    const exit = await Promise.race([
      child.exited,
      new Promise<'still running'>((r) => setTimeout(() => r('still running'), 15_000).unref()),
    ]);
    expect(exit).not.toBe('still running');
    if (exit === 'still running') return;
    expect(Date.now() - stoppedAt).toBeLessThan(15_000);
    expect(exit.code).toBe(0);
    expect(proxy.held.map((h) => h.name)).toEqual([login]);
  }, 40_000);
});
