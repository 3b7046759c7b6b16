// Transfers across a thin line. An upload, over REST and SOAP: the HTTP library's timer for the
// answer's headers (`api.timeouts.headersMs`, a minute by default) ran from the moment a request
// was handed to it, body included: an upload whose body took longer than that to go out — about
// 56 MB of file across a 10 Mbit/s line — was broken off while every byte still moved, reported
// "outcome unknown", searched for, not found, sent again and broken off again: never sent. A body
// is now held to the minimum rate while it goes out (`api.limits.minBytesPerSecond` over each
// `rateWindowMs`, as a download is), and its answer to `api.timeouts.callMs` once it is out; a
// service that stops reading the body is given up on by that rate, not by a timer that also cuts
// slow lines. A transfer waiting for a free connection while others hold them all is not measured
// until its bytes can move (a download was cut as too slow there). And a download retried after
// one broken off late: the minimum rate measured the retry's first window against everything the
// broken attempt had received, and cut the retry unless it moved more than all of that.
//
// The real service (our emulator) behind a proxy that passes a transfer on at a set pace, a bare
// TCP server that stops reading after the first bytes, and a plain HTTP server that breaks off a
// download; none shares code with src/.
import fs from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmulator } from '@gridsync/emulator';
import { GridClient, SoapClient, UploadOutcomeUnknownError, type ClientLimits, type DownloadTarget } from '../../../src/api/index.js';
import { startHungProxy } from '../../helpers/hung-proxy.js';

const MiB = 1024 * 1024;

/** A destination that keeps nothing. */
const sink = (): Writable => new Writable({ write: (_c: Buffer, _e, cb) => cb() });
const KEY = 'demo-key-1001';
/** ~1.7 MB of body: about five seconds at the proxy's pace. */
const SIZE = 1_250_000;

interface ClientOptions {
  headersMs: number;
  limits: Partial<ClientLimits>;
  connections?: number;
}

interface Wire {
  readonly name: string;
  /** The upload and the download as the proxy names them. */
  readonly upload: string;
  readonly download: string;
  client(url: string, o: ClientOptions): GridClient | SoapClient;
}

const WIRES: Wire[] = [
  {
    name: 'REST',
    upload: 'POST /v2/parcels/upload',
    download: 'POST /v2/parcels/download',
    client: (url, o) =>
      new GridClient({
        baseUrl: url,
        auth: { apiKey: KEY },
        maxAttempts: 1,
        timeouts: { headersMs: o.headersMs },
        limits: o.limits,
        ...(o.connections ? { connections: o.connections } : {}),
      }),
  },
  {
    name: 'SOAP',
    upload: 'ParcelUploadMft',
    download: 'ParcelDownload',
    client: (url, o) =>
      new SoapClient({
        url,
        auth: { apiKey: KEY },
        maxAttempts: 1,
        timeouts: { headersMs: o.headersMs },
        limits: o.limits,
        ...(o.connections ? { connections: o.connections } : {}),
      }),
  },
];

describe.each(WIRES)('transfers across a thin line, over $name', (wire) => {
  const cleanups: (() => Promise<unknown> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  const fileOf = (bytes: number): string => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-slow-upload-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'catalog.x12');
    fs.writeFileSync(file, Buffer.alloc(bytes, 'PRICE*'));
    return file;
  };

  it('a body that takes longer than headersMs to go out, still moving, is sent once', async () => {
    const emu = await startEmulator({ port: 0 });
    cleanups.push(() => emu.close());
    const proxy = await startHungProxy(emu.url);
    cleanups.push(() => proxy.close());
    // ~1.7 MB of body at 300 kB/s: about five seconds on the wire, against a one-second headersMs.
    proxy.slowBytesPerSecond = 300_000;
    proxy.rule = (name) => (name === wire.upload ? 'slow' : undefined);
    const client = wire.client(proxy.url, { headersMs: 1000, limits: { rateWindowMs: 500 } });
    cleanups.push(() => client.close());
    const since = new Date(Date.now() - 60_000).toISOString();

    const { parcelId } = await client.uploadParcel(fileOf(SIZE), { fileName: 'catalog.x12', gridIdFrom: 5001, gridIdTo: 5002 });

    expect(proxy.held.map((h) => h.name)).toEqual([wire.upload]);
    const sent = [];
    for await (const p of client.outboxParcels({ mailboxId: 1001, since })) sent.push(p);
    expect(sent.map((p) => [p.parcelId, p.fileName, p.bytes])).toEqual([[parcelId, 'catalog.x12', SIZE]]);
  }, 60_000);

  // One connection, held by a download of ~0.8 MB at 300 kB/s (about three seconds, six rate
  // windows) while a second transfer waits for it: no byte of that one could move meanwhile.
  const behindSlowDownload = async (): Promise<{ client: GridClient | SoapClient; first: Promise<unknown>; big: number }> => {
    const emu = await startEmulator({ port: 0 });
    cleanups.push(() => emu.close());
    const proxy = await startHungProxy(emu.url);
    cleanups.push(() => proxy.close());
    proxy.slowBytesPerSecond = 300_000;
    proxy.rule = (name) => (name === wire.download && proxy.held.length === 0 ? 'slow' : undefined);
    const big = await emu.inject({ mailboxId: 1001, fileName: 'big.x12', content: Buffer.alloc(600_000, 'ISA*') });
    const client = wire.client(proxy.url, { headersMs: 60_000, limits: { rateWindowMs: 500 }, connections: 1 });
    cleanups.push(() => client.close());
    const first = client.downloadParcel(big, sink());
    await new Promise((r) => setTimeout(r, 200));
    return { client, first, big };
  };

  it('an upload waiting for a free connection is held to the minimum rate only from its first byte', async () => {
    const { client, first } = await behindSlowDownload();

    const { parcelId } = await client.uploadParcel(fileOf(1000), { fileName: 'small.x12', gridIdFrom: 5001, gridIdTo: 5002 });

    expect(parcelId).toBeGreaterThan(0);
    expect(await first).toMatchObject({ bytes: 600_000 });
  }, 60_000);

  it('a download waiting for a free connection is held to the minimum rate only from its answer', async () => {
    const { client, first, big } = await behindSlowDownload();

    const info = await client.downloadParcel(big, sink());

    expect(info.bytes).toBe(600_000);
    expect(await first).toMatchObject({ bytes: 600_000 });
  }, 60_000);

  it('a service that stops reading the body: the upload ends, its outcome unknown, at the minimum rate', async () => {
    let received = 0;
    const sockets = new Set<net.Socket>();
    const server = net.createServer((s) => {
      sockets.add(s);
      s.on('data', (d) => {
        received += d.length;
        // Takes the headers and the first bytes of the body, then reads nothing more, answers nothing.
        if (received > 64 * 1024) s.pause();
      });
      s.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(
      () =>
        new Promise<void>((resolve) => {
          for (const s of sockets) s.destroy();
          server.close(() => resolve());
        }),
    );
    // The headers' timer far away, so only the rate can end the attempt; the file larger than
    // what the kernel's socket buffers take in before the sender has to wait.
    const client = wire.client(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, {
      headersMs: 10 * 60_000,
      limits: { rateWindowMs: 500, minBytesPerSecond: 1024 },
    });
    cleanups.push(() => client.close());

    const err: unknown = await client
      .uploadParcel(fileOf(24 * MiB), { fileName: 'catalog.x12', gridIdFrom: 5001, gridIdTo: 5002 })
      .catch((e: unknown) => e);

    expect(err).toBeInstanceOf(UploadOutcomeUnknownError);
    expect((err as Error).cause).toMatchObject({ transportCode: 'GRIDSYNC_TOO_SLOW' });
    expect(received).toBeGreaterThan(0);
  }, 60_000);
});

describe('a download retried after one broken off late', () => {
  const cleanups: (() => Promise<unknown> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it("is held to the minimum rate on its own bytes, not against the broken attempt's", async () => {
    // 900 kB of content: the first answer breaks off after 600 kB of it; the second sends all of it
    // at ~150 kB per half-second window — far above the minimum rate, below what the first received.
    const content = Buffer.alloc(900_000, 'ISA*');
    const encoded = content.toString('base64');
    const head = `{"success":true,"data":{"parcelId":7,"fileName":"a.x12","bytes":${content.length},"content":"`;
    let answers = 0;
    const timers = new Set<NodeJS.Timeout>();
    const server = http.createServer((req, res) => {
      req.resume();
      answers++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(head);
      if (answers === 1) {
        res.write(encoded.slice(0, 800_000));
        const t = setTimeout(() => res.destroy(), 200);
        timers.add(t);
        return;
      }
      let at = 0;
      const next = (): void => {
        if (at >= encoded.length) return void res.end('"}}');
        res.write(encoded.slice(at, (at += 40_000)));
        const t = setTimeout(next, 100);
        timers.add(t);
      };
      next();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(
      () =>
        new Promise<void>((resolve) => {
          for (const t of timers) clearTimeout(t);
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    );
    const client = new GridClient({
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      auth: { apiKey: KEY },
      maxAttempts: 2,
      sleep: async () => undefined,
      limits: { rateWindowMs: 500, minBytesPerSecond: 1024 },
    });
    cleanups.push(() => client.close());
    const kept: Buffer[] = [];
    const target: DownloadTarget = {
      openAttempt: async () => {
        kept.length = 0;
        return new Writable({
          write: (chunk: Buffer, _e, cb) => {
            kept.push(chunk);
            cb();
          },
        });
      },
      discardAttempt: async () => undefined,
    };

    const info = await client.downloadParcel(7, target, { expectedBytes: content.length });

    expect(answers).toBe(2);
    expect(info.bytes).toBe(content.length);
    expect(Buffer.concat(kept).equals(content)).toBe(true);
  }, 60_000);
});
