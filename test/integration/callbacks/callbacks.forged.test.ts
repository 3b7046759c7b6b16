// A forged flood at the callback receiver (issue 23): no or wrong credentials, random paths, a
// right path with wrong credentials, oversized and trickled requests, thousands of connections.
// Every one is refused, not one cycle starts (the service sees no extra pending-list call), and the
// daemon is unhurt: a real call afterwards still brings its parcel in long before the next poll.
import fs from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../../helpers/daemon-child.js';
import {
  freePort,
  inboxFiles,
  metric,
  startDaemon,
  startWorld,
  type CallbackWorld,
  type DaemonHandle,
} from '../../helpers/callbacks-world.js';

let w: CallbackWorld;
let d: DaemonHandle;
let port: number;
let secretPath: string;
let password: string;
beforeAll(async () => {
  w = await startWorld();
  port = await freePort();
  d = await startDaemon(w, 'target', { poll: '10m', callbacks: { port } });
  const state = JSON.parse(fs.readFileSync(path.join(w.dir, 'target', 'state', 'callbacks.json'), 'utf8')) as {
    paths: Record<string, string>;
    password: string;
  };
  password = state.password;
  secretPath = `/gridsync/callbacks/1001/${state.paths['1001']}`;
  await eventually(async () => (await metric(d, 'gridsync_last_success_timestamp_seconds{mailbox="mb1001"}')) > 0);
}, 90_000);
afterAll(async () => {
  await d?.stop();
  await w?.close();
});

const agent = new https.Agent({ rejectUnauthorized: false, keepAlive: false });

function send(p: string, o: { auth?: string; body?: string | Buffer; headers?: Record<string, string> } = {}): Promise<number> {
  return new Promise((resolve) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        path: p,
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', ...(o.auth ? { authorization: o.auth } : {}), ...o.headers },
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', () => resolve(0));
    req.end(o.body ?? '{"parcelId":1}');
  });
}

const basic = (user: string, pw: string): string => `Basic ${Buffer.from(`${user}:${pw}`).toString('base64')}`;

async function pendingListCalls(): Promise<number> {
  const log = (await w.emu('GET', '/_emulator/requests')).data as { endpoint?: string }[];
  return log.filter((r) => r.endpoint === 'parcels.pendingInboxList').length;
}

describe('callbacks: a forged flood', () => {
  it('is refused without a single cycle, and the daemon still takes a real call afterwards', async () => {
    const before = await pendingListCalls();
    const statuses: number[] = [];
    // Random paths, with and without credentials.
    const wrongPath: number[] = [];
    for (let i = 0; i < 100; i++) wrongPath.push(await send(`/gridsync/callbacks/1001/${Math.random().toString(36).slice(2)}`));
    for (let i = 0; i < 30; i++) wrongPath.push(await send(`/x/${i}`, { auth: basic('gridsync', 'guess') }));
    expect(wrongPath.filter((s) => s !== 404)).toEqual([]);
    // The right path: without credentials, with wrong ones, with a wrong user.
    for (let i = 0; i < 50; i++) statuses.push(await send(secretPath));
    for (let i = 0; i < 50; i++) statuses.push(await send(secretPath, { auth: basic('gridsync', `pw${i}`) }));
    statuses.push(await send(secretPath, { auth: 'Bearer x' }));
    expect(statuses.filter((s) => s !== 401)).toEqual([]);
    // Another mailbox's id with this mailbox's secret, even with the right credentials.
    expect(await send(secretPath.replace('/1001/', '/1002/'), { auth: basic('gridsync', password) })).toBe(404);
    // Oversized: declared and chunked, on the right path without credentials (401 before any byte is read).
    expect(await send(secretPath, { body: Buffer.alloc(200 * 1024, 0x61) })).toBe(401);
    expect(await send(secretPath, { body: Buffer.alloc(200 * 1024, 0x61), headers: { 'transfer-encoding': 'chunked' } })).toBe(401);

    // Even with the right path and credentials, a body past 64 KiB is refused and causes nothing.
    expect(await send(secretPath, { auth: basic('gridsync', password), body: Buffer.alloc(70 * 1024, 0x61) })).toBe(413);
    expect(
      await send(secretPath, {
        auth: basic('gridsync', password),
        body: Buffer.alloc(70 * 1024, 0x61),
        headers: { 'transfer-encoding': 'chunked' },
      }),
    ).toBe(413);

    // Trickled requests: headers a byte at a time, never finished. The receiver cuts them.
    const trickled = await Promise.all(
      Array.from({ length: 20 }, async () => {
        const s = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false });
        await new Promise<void>((r) => s.once('secureConnect', () => r()));
        const closed = new Promise<void>((r) => s.once('close', () => r()));
        s.on('error', () => undefined);
        const text = `POST ${secretPath} HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n`;
        let i = 0;
        const t = setInterval(() => {
          if (!s.destroyed) s.write(text[i++ % text.length] as string);
        }, 300);
        const cut = await Promise.race([closed.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 20_000))]);
        clearInterval(t);
        s.destroy();
        return cut;
      }),
    );
    expect(trickled.every(Boolean)).toBe(true);

    // Thousands of connections at once: beyond the cap they are dropped; none does harm.
    const sockets = await Promise.all(
      Array.from(
        { length: 2000 },
        () =>
          new Promise<net.Socket>((resolve) => {
            const s = net.connect(port, '127.0.0.1');
            s.on('error', () => undefined);
            s.once('connect', () => resolve(s));
            s.once('close', () => resolve(s));
          }),
      ),
    );
    await new Promise((r) => setTimeout(r, 500));
    for (const s of sockets) s.destroy();

    expect(await pendingListCalls()).toBe(before);
    expect(await metric(d, 'gridsync_callbacks_received_total{mailbox="mb1001"}')).toBe(0);
    expect(await metric(d, 'gridsync_callbacks_refused_total{reason="path"}')).toBeGreaterThanOrEqual(131);
    expect(await metric(d, 'gridsync_callbacks_refused_total{reason="auth"}')).toBeGreaterThanOrEqual(100);
    expect(inboxFiles(d)).toEqual([]);

    // Unhurt: a parcel announced by a real call arrives long before the 10-minute poll.
    await w.inject('after-flood.x12', 'ISA*after~');
    await eventually(() => inboxFiles(d).includes('after-flood.x12'), 15_000, 'the arrival after the flood');
  }, 120_000);
});
