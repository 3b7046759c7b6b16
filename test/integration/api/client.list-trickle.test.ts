// A pending list that arrives a few bytes at a time (a slow link, a proxy that forwards what it
// has): the list reader lost the middle pieces of a member name spread over three or more reads,
// so `success` was read as `suess`, the answer taken for a failure and every cycle failed.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { startCli } from '../../helpers/daemon-child.js';
import { makeDaemonWorld } from '../../helpers/daemon-config.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A REST service answering each request with the pieces `answer(body)` gives, each in a write of its own, `gapMs` apart. */
async function serve(answer: (body: string) => Iterable<string>, gapMs = 0): Promise<string> {
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      res.socket?.setNoDelay(true);
      res.on('error', () => undefined);
      res.writeHead(200, { 'content-type': 'application/json', date: new Date().toUTCString() });
      void (async () => {
        for (const piece of answer(body)) {
          if (!res.write(piece)) await new Promise((r) => res.once('drain', r));
          if (gapMs > 0) await delay(gapMs);
        }
        res.end();
      })();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** `gridsync once` against `url`, giving up on failing cycles after 3 s (killed after 30 s). */
async function once(url: string, env: Record<string, string> = {}): Promise<{ code: number | null; out: string }> {
  const w = makeDaemonWorld(
    { api: { baseUrl: url, protocol: 'rest', apiKey: 'trickle-key-1', maxAttempts: 1 }, once: { drainTimeout: '3s' } },
    { outbox: undefined },
  );
  cleanups.push(() => w.cleanup());
  const child = startCli(['once', '-c', w.configFile], env, w.dir);
  cleanups.push(() => child.kill('SIGKILL'));
  const stop = setTimeout(() => child.kill('SIGKILL'), 30_000);
  cleanups.push(() => clearTimeout(stop));
  const r = await child.exited;
  return { code: r.code, out: r.stdout + r.stderr };
}

const SESSION = '{"success":true,"data":{"mailboxId":1001}}';

describe('a list answer that trickles in', () => {
  it('is read whole: once ends without an error', async () => {
    const list = '{"success":true,"errorCode":"","message":"","data":[]}';
    const url = await serve(
      (body) =>
        body.includes('mailboxId') ? Array.from({ length: Math.ceil(list.length / 2) }, (_, i) => list.slice(2 * i, 2 * i + 2)) : [SESSION],
      15,
    );
    const r = await once(url);
    expect(r.out).not.toMatch(/"level":50/);
    expect(r.code).toBe(0);
  }, 60_000);

  // Read whole, a member name is held until it ends: one that never ends is held to the cap.
  it('a member name of 300 MB is refused at api.limits.maxBodyBytes, not gathered', async () => {
    const url = await serve((body) => {
      if (!body.includes('mailboxId')) return [SESSION];
      function* list(): Generator<string> {
        yield '{"success":true,"';
        const piece = 'k'.repeat(1024 * 1024);
        for (let i = 0; i < 300; i++) yield piece;
        yield '":1,"data":[]}';
      }
      return list();
    });
    const r = await once(url, { NODE_OPTIONS: '--max-old-space-size=256' });
    expect(r.out).not.toMatch(/heap out of memory|Allocation failed/);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/api\.limits\.maxBodyBytes/);
  }, 120_000);
});
