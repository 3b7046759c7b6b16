// A hostile or broken service cannot exhaust memory or hang a cycle: real node:http servers on
// 127.0.0.1 that send endless bodies, a million-entry pending list, a parcel far longer than
// declared, and answers trickling a byte at a time. Memory assertions have generous margins.
import fs from 'node:fs';
import http, { type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { GridClient, type ClientLimits } from '../../../src/api/client.js';
import { Journal } from '../../../src/journal/index.js';
import { InboundPipeline } from '../../../src/inbound/index.js';
import { DEFAULTS } from '../../../src/config/defaults.js';

const MiB = 1024 * 1024;

interface Served {
  url: string;
  /** Bytes the server managed to write before the client hung up. */
  sent: () => number;
  close: () => Promise<void>;
}

async function serve(handler: (path: string, res: ServerResponse, count: (n: number) => void) => void): Promise<Served> {
  let sent = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => handler(req.url ?? '', res, (n) => (sent += n)));
  });
  server.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    sent: () => sent,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r(undefined));
      }),
  };
}

/** Writes chunks from `next` as fast as the client reads, until it returns undefined or the client goes. */
function pump(res: ServerResponse, count: (n: number) => void, next: () => string | undefined): void {
  const write = (): void => {
    for (;;) {
      const chunk = next();
      if (chunk === undefined) return void res.end();
      count(chunk.length);
      if (!res.write(chunk)) return void res.once('drain', write);
    }
  };
  res.on('error', () => undefined);
  res.on('close', () => res.removeAllListeners('drain'));
  write();
}

const discard = (): Writable => new Writable({ write: (_c, _e, cb) => cb() });

describe('client limits against hostile servers', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  function client(url: string, limits: Partial<ClientLimits> = {}, callMs?: number): GridClient {
    const c = new GridClient({ baseUrl: url, auth: { apiKey: 'k' }, maxAttempts: 1, limits, ...(callMs ? { timeouts: { callMs } } : {}) });
    cleanups.push(() => c.close());
    return c;
  }

  it('a 2xx answer that never ends is refused at api.limits.maxBodyBytes, not buffered', async () => {
    const s = await serve((_p, res, count) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      count(0);
      let first = true;
      pump(res, count, () => {
        if (first) {
          first = false;
          return '{"success":true,"data":{"version":"';
        }
        return 'x'.repeat(64 * 1024);
      });
    });
    cleanups.push(() => s.close());
    const rssBefore = process.memoryUsage().rss;
    const err = await client(s.url, { maxBodyBytes: 8 * MiB })
      .callRaw('GET', '/v2/auth/version')
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'GRID_LIMIT_EXCEEDED', limitKey: 'api.limits.maxBodyBytes' });
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(200 * MiB);
    // The server could not push much past the cap before the connection was dropped.
    expect(s.sent()).toBeLessThan(64 * MiB);
  });

  it('a 1,000,000-entry pending list: the cycle takes maxListEntries, the journal grows by that many rows, memory stays small', async () => {
    const total = 1_000_000;
    const s = await serve((p, res, count) => {
      if (!p.endsWith('/pending-inbox-list')) {
        res.writeHead(404, { 'content-type': 'application/json' });
        return void res.end('{"success":false,"data":null,"errorCode":"ObjectNotFound","message":"no such parcel"}');
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      let i = 0;
      pump(res, count, () => {
        if (i === 0) {
          i++;
          return '{"success":true,"errorCode":"","message":"","data":[';
        }
        if (i > total) return undefined;
        const parts: string[] = [];
        for (let k = 0; k < 2000 && i <= total; k++, i++) {
          parts.push(
            `${i > 1 ? ',' : ''}{"parcelId":${i},"mailboxId":1001,"fileName":"f-${i}.x12","bytes":10,"gridIdFrom":1,"gridIdTo":2,"created":"2026-05-07T08:00:00Z"}`,
          );
        }
        if (i > total) parts.push(']}');
        return parts.join('');
      });
    });
    cleanups.push(() => s.close());
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-limits-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const journal = Journal.open(path.join(dir, 'journal.sqlite'));
    cleanups.push(() => journal.close());
    const c = client(s.url, { maxListEntries: 1000 });
    const rssBefore = process.memoryUsage().rss;
    const pending = await c.pendingInbox(1001);
    expect(pending.parcels).toHaveLength(1000);
    expect(pending.parcels[999]?.parcelId).toBe(1000);
    expect(pending.omitted).toBe(total - 1000);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(300 * MiB);
    expect(s.sent()).toBeGreaterThan(100 * MiB); // the whole list really went over the wire

    // Through the pipeline: at most maxListEntries rows per cycle (the downloads themselves fail
    // here with 404: this server answers only the list, which is enough to count the journal rows).
    const inbound = new InboundPipeline({
      client: c,
      journal,
      stateDir: dir,
      mailbox: { mailboxId: 1001, name: 'mb', inbox: { ...DEFAULTS.inbox, dir: path.join(dir, 'inbox'), concurrency: 8, maxAttempts: 1 } },
    });
    await inbound.checkPrerequisites();
    const r = await inbound.runCycle();
    expect(r.listed).toBe(1000);
    const rows = journal.db.prepare('SELECT COUNT(*) AS n FROM inbound_parcels').get() as { n: number };
    expect(rows.n).toBe(1000);
    expect(fs.statSync(path.join(dir, 'journal.sqlite')).size).toBeLessThan(20 * MiB);
  }, 120_000);

  it('a parcel declared as 100 bytes whose content runs on: stopped at the first byte past 100, nothing more written', async () => {
    const s = await serve((_p, res, count) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      let first = true;
      pump(res, count, () => {
        if (first) {
          first = false;
          return '{"success":true,"data":{"parcelId":7,"fileName":"a","bytes":100,"content":"';
        }
        return 'QUFB'.repeat(16 * 1024); // "AAA" forever
      });
    });
    cleanups.push(() => s.close());
    let written = 0;
    const sink = new Writable({
      write: (c: Buffer, _e, cb) => {
        written += c.length;
        cb();
      },
    });
    const err = await client(s.url)
      .downloadParcel(7, sink, { expectedBytes: 100 })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'GRID_CONTENT_INTEGRITY', reason: 'byte-mismatch' });
    expect(written).toBeLessThanOrEqual(100);
    expect(s.sent()).toBeLessThan(64 * MiB);
  });

  it('slowloris: an answer trickling one byte per second fails the call at api.timeouts.callMs', async () => {
    const s = await serve((_p, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const text = '{"success":true,"data":[]}';
      let i = 0;
      const t = setInterval(() => (i < text.length ? res.write(text[i++]) : (clearInterval(t), res.end())), 1000);
      res.on('close', () => clearInterval(t));
    });
    cleanups.push(() => s.close());
    const started = Date.now();
    const err = await client(s.url, {}, 1500)
      .pendingInbox(1001)
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'GRID_TRANSPORT_ERROR', transportCode: 'GRIDSYNC_CALL_DEADLINE' });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('slowloris on a download: a transfer below the minimum rate is broken off after one window', async () => {
    const s = await serve((_p, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"success":true,"data":{"parcelId":7,"fileName":"a","bytes":1000,"content":"');
      const t = setInterval(() => res.write('Q'), 200);
      res.on('close', () => clearInterval(t));
    });
    cleanups.push(() => s.close());
    const started = Date.now();
    const err = await client(s.url, { minBytesPerSecond: 100, rateWindowMs: 1000 })
      .downloadParcel(7, discard())
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ transportCode: 'GRIDSYNC_TOO_SLOW' });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('slowloris on the answer to an upload: the outcome is reported unknown at api.timeouts.callMs (never a blind resend)', async () => {
    const s = await serve((_p, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const text = '{"success":true,"data":123}';
      let i = 0;
      const t = setInterval(() => (i < text.length ? res.write(text[i++]) : (clearInterval(t), res.end())), 1000);
      res.on('close', () => clearInterval(t));
    });
    cleanups.push(() => s.close());
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-limits-up-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'a.x12');
    fs.writeFileSync(file, 'ISA*a~');
    const started = Date.now();
    const err = await client(s.url, {}, 1500)
      .uploadParcel(file, { fileName: 'a.x12' })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'GRID_UPLOAD_OUTCOME_UNKNOWN' });
    expect(String((err as Error).message)).toMatch(/GRIDSYNC_CALL_DEADLINE/);
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
