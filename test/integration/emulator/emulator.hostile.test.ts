// The emulator attacked from outside: uploads broken off mid-body, garbage sent to every route
// including the unauthenticated /_emulator/inject, the CLI's exposure guards and the Root key kept
// out of the process list, and the daemon with `baseUrl: embedded` outliving all of it.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { adminAccess, checkExposure, startEmulator, type Emulator } from '@gridsync/emulator';
import { makeDaemonWorld } from '../../helpers/daemon-config.js';
import { eventually, runCli, startCli } from '../../helpers/daemon-child.js';
import { x12 } from '../../helpers/edi.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function tmpDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-emu-hostile-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Sends the start of a request whose body is declared longer than what is sent, then cuts the connection. */
function brokenOff(url: string, head: string, partialBody: string): Promise<void> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const s = net.connect(Number(u.port), u.hostname, () => {
      s.write(`${head}Content-Length: ${partialBody.length * 10 + 1000}\r\n\r\n${partialBody}`);
      setTimeout(() => s.destroy(), 20);
    });
    s.on('close', () => resolve());
    s.on('error', () => resolve());
  });
}

async function startWatched(dataFile?: string): Promise<{ emu: Emulator; errors: string[] }> {
  const errors: string[] = [];
  const emu = await startEmulator({ ...(dataFile ? { dataFile } : {}), onError: (err, ctx) => errors.push(`${ctx}: ${String(err)}`) });
  cleanups.push(() => emu.close());
  return { emu, errors };
}

describe('the emulator survives broken-off requests and any body on any route', () => {
  it('uploads and injections cut mid-body leave it answering, with no partial content left behind', async () => {
    const dir = tmpDir();
    const { emu, errors } = await startWatched(path.join(dir, 'emu.sqlite'));
    const b64 = Buffer.alloc(300_000, 'A').toString('base64');
    for (let i = 0; i < 20; i++) {
      await brokenOff(
        emu.url,
        'POST /v2/parcels/upload HTTP/1.1\r\nHost: x\r\nX-API-Key: demo-key-1001\r\nContent-Type: application/json\r\n',
        `{"fileName":"a${i}.edi","content":"${b64.slice(0, 1000 * (i + 1))}`,
      );
      await brokenOff(
        emu.url,
        'POST /_emulator/inject HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n',
        `{"mailboxId":1001,"content":"${b64.slice(0, 5000 * (i + 1))}`,
      );
      await brokenOff(
        emu.url,
        'POST /v2/users/list HTTP/1.1\r\nHost: x\r\nX-API-Key: demo-key-1001\r\nContent-Type: application/json\r\n',
        '{"pageNo":',
      );
    }
    const me = await fetch(`${emu.url}/v2/users/me`, { headers: { 'x-api-key': 'demo-key-1001' } });
    expect(me.status).toBe(200);
    const leftovers = await eventually(
      () => {
        const tmp = fs.readdirSync(`${path.join(dir, 'emu.sqlite')}.content`).filter((f) => f.startsWith('tmp-'));
        return tmp.length === 0 ? tmp : undefined;
      },
      5000,
      'partial uploads removed',
    );
    expect(leftovers).toEqual([]);
    const parcels = (await (await fetch(`${emu.url}/_emulator/parcels`)).json()) as { data: unknown[] };
    expect(parcels.data).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('answers 2,000 generated garbage bodies on /_emulator/inject and the upload with 4xx or 200, never a 5xx', async () => {
    const { emu, errors } = await startWatched();
    const pieces = [
      '{',
      '}',
      '[',
      ']',
      '"content"',
      '"mailboxId"',
      ':',
      ',',
      '1001',
      '"QUJD"',
      '"',
      '\\',
      '\\u00',
      'null',
      'true',
      '1e999',
      '-0',
      ' ',
      '"fileName"',
      '"a\\ud800"',
      'ÿ',
      '"gridIdFrom"',
      '5001',
      '9007199254740993',
      '"\\"',
    ];
    let seed = 20261123;
    const rnd = (n: number): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const statuses = new Map<number, number>();
    for (let i = 0; i < 2000; i++) {
      let body = rnd(3) === 0 ? '{"mailboxId":1001,' : '';
      for (let j = rnd(24); j > 0; j--) body += pieces[rnd(pieces.length)];
      const route = rnd(2) ? '/_emulator/inject' : '/v2/parcels/upload';
      const res = await fetch(emu.url + route, {
        method: 'POST',
        body,
        headers: { 'x-api-key': 'demo-key-1001' },
        signal: AbortSignal.timeout(10_000),
      });
      await res.arrayBuffer();
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      if (res.status >= 500) throw new Error(`${route} ${JSON.stringify(body)} → ${res.status}`);
    }
    expect([...statuses.keys()].every((s) => s === 200 || (s >= 400 && s < 500))).toBe(true);
    expect(errors).toEqual([]);
  });
});

describe('oversized bodies', () => {
  it('a JSON body over 1 MiB on any route is a 400 naming the limit, with the connection closed', async () => {
    const { emu, errors } = await startWatched();
    const body = JSON.stringify({ pageNo: 1, pad: 'x'.repeat(2_000_000) });
    for (const p of ['/v2/users/list', '/v2/keys/create', '/_emulator/faults']) {
      const res = await fetch(emu.url + p, {
        method: 'POST',
        body,
        headers: { 'x-api-key': 'demo-key-1001', 'content-type': 'application/json' },
      });
      const env = (await res.json()) as { errorCode: string; message: string };
      expect([p, res.status, env.errorCode]).toEqual([p, 400, 'InvalidParameter']);
      expect(env.message).toMatch(/larger than 1048576 bytes/);
      expect(res.headers.get('connection')).toBe('close');
    }
    expect((await fetch(`${emu.url}/v2/auth/version`)).status).toBe(200);
    expect(errors).toEqual([]);
  });
});

describe('admin routes and exposure', () => {
  it('admin routes: loopback only, unless remote admin is on and the Root key is sent', () => {
    const base = { admin: true, remoteAdmin: false, rootKey: false };
    expect(adminAccess({ ...base, remoteAddress: '127.0.0.1' })).toBe('allow');
    expect(adminAccess({ ...base, remoteAddress: '::1' })).toBe('allow');
    expect(adminAccess({ ...base, remoteAddress: '::ffff:127.0.0.1' })).toBe('allow');
    expect(adminAccess({ ...base, remoteAddress: '192.0.2.7' })).toBe('hidden');
    expect(adminAccess({ ...base, remoteAddress: '192.0.2.7', rootKey: true })).toBe('hidden');
    expect(adminAccess({ ...base, remoteAdmin: true, remoteAddress: '192.0.2.7' })).toBe('needs-root-key');
    expect(adminAccess({ ...base, remoteAdmin: true, remoteAddress: '192.0.2.7', rootKey: true })).toBe('allow');
    expect(adminAccess({ ...base, admin: false, remoteAddress: '127.0.0.1' })).toBe('hidden');
  });

  it('listening beyond loopback needs expose and a non-default Root key of 16+ characters', () => {
    expect(() => checkExposure({ host: '0.0.0.0' })).toThrow(/expose/);
    expect(() => checkExposure({ host: '0.0.0.0', expose: true })).toThrow(/Root key/);
    expect(() => checkExposure({ host: '0.0.0.0', expose: true, rootKey: 'demo-key-root' })).toThrow(/Root key/);
    expect(() => checkExposure({ host: '::', expose: true, rootKey: 'short' })).toThrow(/Root key/);
    expect(() => checkExposure({ host: '0.0.0.0', expose: true, rootKey: 'a-long-private-root-key' })).not.toThrow();
    expect(() => checkExposure({ remoteAdmin: true })).toThrow(/Root key/);
    expect(() => checkExposure({ host: '127.0.0.1' })).not.toThrow();
  });

  it('`gridsync emulator --host 0.0.0.0` refuses without --expose, and with the default key (exit 2, one line)', () => {
    const a = runCli(['emulator', '--host', '0.0.0.0', '--port', '0']);
    expect(a.status).toBe(2);
    expect(a.stderr).toMatch(/--expose/);
    const b = runCli(['emulator', '--host', '0.0.0.0', '--port', '0', '--expose', '--root-key', 'demo-key-root']);
    expect(b.status).toBe(2);
    expect(b.stderr).toMatch(/Root key/);
    expect(b.stderr).not.toMatch(/\n\s+at /);
  });

  it.each([
    ['--root-key-file', (f: string) => [['--root-key-file', f], {}]],
    ['the environment', () => [[], { GRIDSYNC_EMULATOR_ROOT_KEY: 'from-env-0123456789abcdef' }]],
  ] as const)('takes the Root key from %s, and the key never appears in the process’s command line', async (_how, setup) => {
    const dir = tmpDir();
    const keyFile = path.join(dir, 'root.key');
    fs.writeFileSync(keyFile, 'from-file-0123456789abcdef\n', { mode: 0o600 });
    const [args, env] = setup(keyFile) as [string[], Record<string, string>];
    const key = env.GRIDSYNC_EMULATOR_ROOT_KEY ?? 'from-file-0123456789abcdef';
    const child = startCli(['emulator', '--port', '0', ...args], env);
    cleanups.push(async () => {
      child.kill('SIGTERM');
      await child.exited;
    });
    const [, url] = await child.waitFor(/listening on (http:\/\/[^\s]+)/);
    const me = (await (await fetch(`${url}/v2/users/me`, { headers: { 'x-api-key': key } })).json()) as { data: { authLevel: string } };
    expect(me.data.authLevel).toBe('Root');
    expect((await fetch(`${url}/v2/users/me`, { headers: { 'x-api-key': 'demo-key-root' } })).status).toBe(401);
    expect(fs.readFileSync(`/proc/${child.pid}/cmdline`, 'utf8')).not.toContain(key);
  });
});

describe('baseUrl: embedded', () => {
  it('the daemon outlives broken-off and garbage requests to its embedded emulator and keeps syncing', async () => {
    const w = makeDaemonWorld({ log: { level: 'info', pretty: false } });
    cleanups.push(() => w.cleanup());
    const child = startCli(['run', '-c', w.configFile], { GRIDSYNC_HTTP_PORT: '0' }, w.dir);
    cleanups.push(async () => {
      // SIGTERM: the daemon closes its embedded emulator, which removes its temporary content folder.
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await child.exited;
      clearTimeout(timer);
    });
    const [, url] = await child.waitFor(/"url":"(http:\/\/127\.0\.0\.1:\d+)"[^\n]*"msg":"embedded emulator started"/);
    await child.waitFor(/"msg":"gridsync started"/);
    for (let i = 0; i < 10; i++) {
      await brokenOff(
        url!,
        'POST /v2/parcels/upload HTTP/1.1\r\nHost: x\r\nX-API-Key: demo-key-1001\r\nContent-Type: application/json\r\n',
        `{"fileName":"x","content":"${'QUJD'.repeat(2000 * (i + 1))}`,
      );
      await brokenOff(url!, 'POST /_emulator/inject HTTP/1.1\r\nHost: x\r\n', '{"mailboxId":');
      for (const body of [
        '\u0000',
        '{"mailboxId":1e999,"content":"QUJD"}',
        '{"content":[]}',
        '[[[[[[[[[[',
        '{"mailboxId":1001,"content":"QU==JD"}',
      ]) {
        const r = await fetch(`${url}/_emulator/inject`, { method: 'POST', body });
        expect(r.status).toBeLessThan(500);
      }
    }
    fs.writeFileSync(path.join(w.outbox, 'after.x12'), x12(4242));
    await eventually(() => fs.readdirSync(w.sent).includes('after.x12'), 20_000, 'the file sent after the attack');
    expect(child.output()).not.toMatch(/embedded emulator error/);
  });
});
