// SIGTERM to `gridsync once` while it waits on something that takes the cycle's signal: the
// outbox's wait for a file to stop changing (up to stableMs) and a lookup of a partner's name that
// the service holds (up to 5 s). Neither took the signal: the stop waited them out.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmulator } from '@gridsync/emulator';
import { eventually, startCli } from '../../helpers/daemon-child.js';
import { startHungProxy } from '../../helpers/hung-proxy.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function folder(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-once-signal-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Starts `once`, sends SIGTERM when `ready` says so, and returns how long the exit took after it. */
async function interrupted(dir: string, config: object, ready: (out: string) => boolean): Promise<{ ms: number; code: number | null }> {
  const configFile = path.join(dir, 'gridsync.yaml');
  fs.writeFileSync(configFile, YAML.stringify(config), { mode: 0o600 });
  const child = startCli(['once', '-c', configFile], {}, dir);
  cleanups.push(() => child.kill('SIGKILL'));
  await eventually(() => ready(child.output()), 20_000, 'once waiting');
  const t = performance.now();
  child.kill('SIGTERM');
  const exit = await child.exited;
  return { ms: performance.now() - t, code: exit.code };
}

describe('SIGTERM to once', () => {
  it('ends the wait for an outbox file to stop changing at once, not after stableMs', async () => {
    const dir = folder();
    const emu = await startEmulator({ port: 0 });
    cleanups.push(() => emu.close());
    for (const d of ['outbox', 'sent', 'error']) fs.mkdirSync(path.join(dir, d));
    fs.writeFileSync(path.join(dir, 'outbox', 'order.x12'), 'ISA*1~');
    const { ms, code } = await interrupted(
      dir,
      {
        api: { baseUrl: emu.url, apiKey: 'demo-key-1001' },
        stateDir: 'state',
        log: { level: 'debug', pretty: false },
        mailboxes: [{ mailboxId: 1001, outbox: { dir: 'outbox', sentDir: 'sent', errorDir: 'error', stableMs: '20s' } }],
      },
      // The cycle has scanned the outbox and waits for the file, seen for the first time, to age.
      (out) => /"msg":"mailbox cycle started"/.test(out),
    );
    // It took the rest of stableMs (20 s) before.
    expect(ms, 'SIGTERM to exit (ms)').toBeLessThan(8_000);
    expect(code).toBe(1);
    expect(fs.readdirSync(path.join(dir, 'outbox'))).toEqual(['order.x12']);
  }, 60_000);

  it('ends the wait for a partner name the service holds at once, not after the lookup’s deadline', async () => {
    const dir = folder();
    const emu = await startEmulator({ port: 0 });
    cleanups.push(() => emu.close());
    const proxy = await startHungProxy(emu.url);
    cleanups.push(() => proxy.close());
    proxy.rule = (name) => (name.startsWith('GET /v2/ids/') ? 'silent' : undefined);
    await emu.inject({ mailboxId: 1001, fileName: 'order.x12', content: Buffer.from('ISA*1~'), gridIdFrom: 5005 });
    fs.mkdirSync(path.join(dir, 'inbox'));
    const { ms, code } = await interrupted(
      dir,
      {
        // The lookup's deadline is the smaller of 5 s and callMs.
        api: { baseUrl: proxy.url, apiKey: 'demo-key-1001', timeouts: { callMs: '30s' } },
        stateDir: 'state',
        log: { level: 'info', pretty: false },
        mailboxes: [{ mailboxId: 1001, inbox: { dir: 'inbox', nameTemplate: '{partner}/{fileName}' } }],
      },
      () => proxy.held.length > 0,
    );
    // It took the lookup's deadline (5 s) before.
    expect(ms, 'SIGTERM to exit (ms)').toBeLessThan(3_000);
    expect(code).toBe(1);
    expect(fs.readdirSync(path.join(dir, 'inbox'))).toEqual([]);
  }, 60_000);
});
