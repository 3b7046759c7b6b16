// `gridsync once` with a login session, against a service that takes the logout and never
// finishes its answer (silent, or a byte at a time). The logout at the end of the run is no
// attempt of the client's loop, and over REST nothing bounded it: every parcel was delivered, and
// the process never exited — a cron job piling up. Over SOAP it was bounded by callMs already.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmulator } from '@gridsync/emulator';
import { startCli } from '../../helpers/daemon-child.js';
import { startHungProxy, type HangMode } from '../../helpers/hung-proxy.js';

describe.each([
  { protocol: 'rest', logout: 'POST /v2/auth/logout' },
  { protocol: 'soap', logout: 'Logout' },
] as const)('once over $protocol: a logout the service never answers', ({ protocol, logout }) => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it.each(['trickle', 'silent'] as HangMode[])(
    '%s: exits 0 within callMs of the logout',
    async (mode) => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-hung-logout-'));
      cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
      const emu = await startEmulator({ port: 0 });
      cleanups.push(() => emu.close());
      const proxy = await startHungProxy(emu.url);
      cleanups.push(() => proxy.close());
      proxy.rule = (name) => (name === logout ? mode : undefined);
      await emu.inject({ mailboxId: 1001, fileName: 'order.x12', content: Buffer.from('ISA*1~') });
      fs.mkdirSync(path.join(dir, 'inbox'));
      const configFile = path.join(dir, 'gridsync.yaml');
      fs.writeFileSync(
        configFile,
        YAML.stringify({
          api: { baseUrl: proxy.url, protocol, login: 'erp', password: 'Demo-pass1', timeouts: { callMs: '2s' } },
          stateDir: 'state',
          log: { level: 'info', pretty: false },
          mailboxes: [{ mailboxId: 1001, inbox: { dir: 'inbox' } }],
        }),
        { mode: 0o600 },
      );
      const child = startCli(['once', '-c', configFile], {}, dir);
      cleanups.push(() => child.kill('SIGKILL'));
      const exit = await Promise.race([
        child.exited,
        new Promise<'still running'>((r) => setTimeout(() => r('still running'), 25_000).unref()),
      ]);
      expect(proxy.held.map((h) => h.name)).toEqual([logout]);
      expect(exit).not.toBe('still running');
      if (exit === 'still running') return;
      expect(exit.code).toBe(0);
      expect(fs.readdirSync(path.join(dir, 'inbox'))).toEqual(['order.x12']);
    },
    40_000,
  );
});
