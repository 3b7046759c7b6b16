// Hostile round 3: answers far costlier in memory than api.limits.maxBodyBytes (32 MiB) lets a
// plain answer be. Over REST, a pending list's records were each capped at that size but kept
// up to maxListEntries of them (5,000): 400 records of 1 MiB were all held and parsed. Over SOAP,
// one element with millions of attributes in a 30 MB answer took ~900 MB of heap while saxes
// gathered them. The built CLI runs `once` with a 256 MB heap against scripted services (not our
// emulator): it must refuse the answer with a typed error, never die of memory.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startCli } from '../../helpers/daemon-child.js';
import { makeDaemonWorld } from '../../helpers/daemon-config.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A server answering every request with `answer(body)` written in pieces (a large answer streams). */
async function serve(answer: (body: string) => { type: string; pieces: Iterable<string> }): Promise<string> {
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const a = answer(body);
      res.writeHead(200, { 'content-type': a.type, date: new Date().toUTCString() });
      const it = a.pieces[Symbol.iterator]();
      const pump = (): void => {
        for (;;) {
          const n = it.next();
          if (n.done) return void res.end();
          if (!res.write(n.value)) return void res.once('drain', pump);
        }
      };
      res.on('error', () => undefined);
      pump();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** `gridsync once` with a 256 MB heap; resolves with how it ended. */
async function onceSmallHeap(api: Record<string, unknown>): Promise<{ code: number | null; signal: string | null; out: string }> {
  const w = makeDaemonWorld({ api: { maxAttempts: 1, ...api }, once: { drainTimeout: '3s' } }, { outbox: undefined });
  cleanups.push(() => w.cleanup());
  const child = startCli(['once', '-c', w.configFile], { NODE_OPTIONS: '--max-old-space-size=256' }, w.dir);
  cleanups.push(() => child.kill('SIGKILL'));
  const r = await child.exited;
  return { code: r.code, signal: r.signal, out: r.stdout + r.stderr };
}

describe('answers that cost far more memory than their size', () => {
  it('REST: a pending list of 400 records of 1 MiB each is refused at api.limits.maxBodyBytes, not held', async () => {
    const name = 'n'.repeat(1024 * 1024);
    const url = await serve((body) => {
      if (!body.includes('mailboxId')) return { type: 'application/json', pieces: ['{"success":true,"data":{"mailboxId":1001}}'] };
      function* list(): Generator<string> {
        yield '{"success":true,"errorCode":"","message":"","data":[';
        for (let i = 1; i <= 400; i++) yield `${i > 1 ? ',' : ''}{"parcelId":${i},"mailboxId":1001,"bytes":1,"fileName":"${name}"}`;
        yield ']}';
      }
      return { type: 'application/json', pieces: list() };
    });
    const r = await onceSmallHeap({ baseUrl: url, protocol: 'rest', apiKey: 'amplified-key-1' });
    expect(r.out).not.toMatch(/heap out of memory|Allocation failed/);
    expect(r.signal).toBeNull();
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/api\.limits\.maxBodyBytes/);
  }, 120_000);

  it('SOAP: an answer with millions of attributes on one element is refused, not gathered', async () => {
    const url = await serve((body) => {
      const op = /<(?:\w+:)?Body[^>]*>\s*<(?:\w+:)?(\w+)/.exec(body)?.[1] ?? 'X';
      function* answer(): Generator<string> {
        yield `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><${op}Response xmlns="http://www.gxs.com/GridOS/"><${op}Result `;
        for (let i = 0; i < 2_500_000; i += 10_000) yield Array.from({ length: 10_000 }, (_, j) => `a${i + j}="x"`).join(' ') + ' ';
        yield `></${op}Result></${op}Response></soap:Body></soap:Envelope>`;
      }
      return { type: 'text/xml; charset=utf-8', pieces: answer() };
    });
    const r = await onceSmallHeap({ baseUrl: `${url}/v4.1/GridOS.asmx`, protocol: 'soap', apiKey: 'amplified-key-1' });
    expect(r.out).not.toMatch(/heap out of memory|Allocation failed/);
    expect(r.signal).toBeNull();
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/attributes/);
  }, 120_000);

  // Hostile round 4: the REST login's answer (a bearer session) was read without any cap at all,
  // the only answer of the client that was: 300 MB of token took the heap with it.
  it('REST: a login answer of 300 MB is refused at api.limits.maxBodyBytes, not buffered', async () => {
    const url = await serve(() => {
      function* login(): Generator<string> {
        yield '{"success":true,"data":{"token":"';
        const piece = 't'.repeat(1024 * 1024);
        for (let i = 0; i < 300; i++) yield piece;
        yield '","expiresAt":"2099-01-01T00:00:00Z"}}';
      }
      return { type: 'application/json', pieces: login() };
    });
    const r = await onceSmallHeap({ baseUrl: url, protocol: 'rest', login: 'amplified', password: 'amplified-password-1' });
    expect(r.out).not.toMatch(/heap out of memory|Allocation failed/);
    expect(r.signal).toBeNull();
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/api\.limits\.maxBodyBytes/);
  }, 120_000);

  // Hostile round 4: bytes alone did not bound what a JSON answer costs once parsed. 32 MB of
  // nested brackets in the session's answer took ~1 GB of heap; 2.5 million tiny members in one
  // list record were all parsed and held (~280 MB).
  it('REST: a session answer of 32 MB of nested brackets is refused before it is parsed', async () => {
    const depth = 16_000_000;
    const url = await serve(() => {
      function* nested(): Generator<string> {
        yield '{"success":true,"data":';
        const open = '['.repeat(1_000_000);
        for (let i = 0; i < depth; i += 1_000_000) yield open;
        const close = ']'.repeat(1_000_000);
        for (let i = 0; i < depth; i += 1_000_000) yield close;
        yield '}';
      }
      return { type: 'application/json', pieces: nested() };
    });
    const r = await onceSmallHeap({ baseUrl: url, protocol: 'rest', apiKey: 'amplified-key-1' });
    expect(r.out).not.toMatch(/heap out of memory|Allocation failed/);
    expect(r.signal).toBeNull();
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/nested deeper than 64 levels/);
  }, 120_000);

  it('REST: a pending-list record of 2.5 million tiny members is refused, not parsed', async () => {
    const url = await serve((body) => {
      if (!body.includes('mailboxId')) return { type: 'application/json', pieces: ['{"success":true,"data":{"mailboxId":1001}}'] };
      function* list(): Generator<string> {
        yield '{"success":true,"errorCode":"","message":"","data":[{"parcelId":1,"mailboxId":1001,"bytes":1';
        for (let i = 0; i < 2_500_000; i += 10_000) yield Array.from({ length: 10_000 }, (_, j) => `,"a${i + j}":1`).join('');
        yield '}]}';
      }
      return { type: 'application/json', pieces: list() };
    });
    const r = await onceSmallHeap({ baseUrl: url, protocol: 'rest', apiKey: 'amplified-key-1' });
    expect(r.out).not.toMatch(/heap out of memory|Allocation failed/);
    expect(r.signal).toBeNull();
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/holds more than \d+ values/);
    expect(r.out).toMatch(/api\.limits\.maxListEntries/);
  }, 120_000);

  // A download's answer is streamed and not held to maxBodyBytes (its content goes to disk), but
  // every member beside the content was built in memory without a bound: after a parcel of one
  // byte, members kept coming until the heap ran out.
  it('REST: a download answer trailing millions of members after its content is refused, not held', async () => {
    const url = await serve((body) => {
      if (body.includes('parcelId')) {
        function* download(): Generator<string> {
          yield '{"success":true,"errorCode":"","message":"","data":{"parcelId":1,"bytes":1,"content":"QQ=="';
          for (let i = 0; i < 10_000_000; i += 10_000) yield Array.from({ length: 10_000 }, (_, j) => `,"a${i + j}":1`).join('');
          yield '}}';
        }
        return { type: 'application/json', pieces: download() };
      }
      if (body.includes('mailboxId'))
        return {
          type: 'application/json',
          pieces: ['{"success":true,"data":[{"parcelId":1,"mailboxId":1001,"bytes":1,"fileName":"a.txt","status":"InBoxReady"}]}'],
        };
      return { type: 'application/json', pieces: ['{"success":true,"data":{"mailboxId":1001}}'] };
    });
    const r = await onceSmallHeap({ baseUrl: url, protocol: 'rest', apiKey: 'amplified-key-1' });
    expect(r.out).not.toMatch(/heap out of memory|Allocation failed/);
    expect(r.signal).toBeNull();
    expect(r.out).toMatch(/GRID_LIMIT_EXCEEDED/);
  }, 120_000);
});
