// The limits, deadlines, the rate-limit pause, redaction and confirm semantics hold over REST and
// SOAP alike, because both clients stand on one core: the same hostile-server cases run over both
// protocols. The servers are plain node:http on 127.0.0.1 written from the wire facts (the REST
// envelope, the SOAP 1.1 envelope and fault), sharing no code with src/. Memory and byte
// assertions have generous margins; time is only bounded from above, far from the expected value.
import fs from 'node:fs';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it, type TestContext } from 'vitest';
import { GridClient, SoapClient, type ClientLimits, type DownloadTarget, type GridAuth } from '../../../src/api/index.js';

const MiB = 1024 * 1024;
const API_KEY = 'key-7f3a9c-secret';
const TOKEN = 'session-token-4b8e21';

/** What a request asks for, whatever the protocol. */
type Kind = 'download' | 'list' | 'whoami' | 'confirm' | 'info' | 'login' | 'other';

interface Hostile {
  url: string;
  /** Characters the server wrote before the client hung up. */
  sent: () => number;
  /** Arrival times of the requests of each kind. */
  arrivals: { kind: Kind; at: number }[];
  close: () => Promise<void>;
}

type Handler = (kind: Kind, res: ServerResponse, count: (n: number) => void, n: number) => void;

async function hostile(wire: Wire, handler: Handler): Promise<Hostile> {
  let sent = 0;
  const arrivals: { kind: Kind; at: number }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const kind = wire.kindOf(req, Buffer.concat(chunks).toString('utf8'));
      arrivals.push({ kind, at: Date.now() });
      res.on('error', () => undefined);
      handler(kind, res, (n) => (sent += n), arrivals.filter((a) => a.kind === kind).length);
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    sent: () => sent,
    arrivals,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r(undefined));
      }),
  };
}

/** Writes `head`, then chunks from `next` as fast as the client reads (until undefined), then `tail`. */
function pump(res: ServerResponse, count: (n: number) => void, head: string, next: () => string | undefined, tail = ''): void {
  res.write(head);
  count(head.length);
  const write = (): void => {
    for (;;) {
      const chunk = next();
      if (chunk === undefined) return void res.end(tail);
      count(chunk.length);
      if (!res.write(chunk)) return void res.once('drain', write);
    }
  };
  res.on('close', () => res.removeAllListeners('drain'));
  write();
}

/** `total` characters of `unit` repeated, in chunks. */
function repeat(unit: string, total: number): () => string | undefined {
  const chunk = unit.repeat(Math.max(1, Math.floor((64 * 1024) / unit.length)));
  let left = total;
  return () => {
    if (left <= 0) return undefined;
    left -= chunk.length;
    return chunk;
  };
}

// ------------------------------------------------------------------ the two wires

interface Wire {
  readonly name: 'rest' | 'soap';
  kindOf(req: IncomingMessage, body: string): Kind;
  client(url: string, o: { limits?: Partial<ClientLimits>; callMs?: number; maxAttempts?: number; auth?: GridAuth }): Client;
  /** A successful answer's start and end around a download's content, declaring `bytes`. */
  download(bytes: number): { head: string; tail: string };
  /** A pending list: start, one record, separator, end. */
  list: { head: string; record: (i: number) => string; sep: string; tail: string };
  /** The start of a WhoAmI / session answer whose string value never ends. */
  endlessText: string;
  /** The start of a WhoAmI / session answer followed by elements (or values) without end. */
  endlessElements: { head: string; unit: string };
  /** A session answer (what a good call gets). */
  session: string;
  /** An error answer whose text quotes `text`. */
  error(text: string): { status: number; type: string; body: string };
  /** A 429 with Retry-After. */
  tooMany: { status: number; type: string; body: string };
  /** A confirm answered as a success about another parcel / a SOAP `false`. */
  confirmOther: string;
  /** A confirm answered about this parcel / a SOAP `false` (then decided on the parcel's status). */
  confirmThis: string;
  /** The parcel-info answer for parcel 7 with `status`. */
  info(status: string): string;
  /** A login answer issuing `token`. */
  login(token: string): string;
}

type Client = GridClient | SoapClient;

const NS = 'https://os.grid.example/';
const soap = (op: string, result: string): string =>
  `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>` +
  `<${op}Response xmlns="${NS}"><${op}Result>${result}</${op}Result></${op}Response></soap:Body></soap:Envelope>`;
const soapHead = (op: string): string =>
  `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><${op}Response xmlns="${NS}"><${op}Result>`;
const soapTail = (op: string): string => `</${op}Result></${op}Response></soap:Body></soap:Envelope>`;
const rest = (data: unknown): string => JSON.stringify({ success: true, errorCode: '', message: '', data });

const REST: Wire = {
  name: 'rest',
  kindOf: (req) => {
    const p = req.url ?? '';
    if (p.endsWith('/parcels/download')) return 'download';
    if (p.includes('/pending-inbox-list')) return 'list';
    if (p.endsWith('/auth/session')) return 'whoami';
    if (p.endsWith('/parcels/confirm')) return 'confirm';
    if (p.endsWith('/auth/login')) return 'login';
    if (/\/parcels\/\d+$/.test(p)) return 'info';
    return 'other';
  },
  client: (url, o) =>
    new GridClient({
      baseUrl: url,
      auth: o.auth ?? { apiKey: API_KEY },
      maxAttempts: o.maxAttempts ?? 1,
      limits: o.limits ?? {},
      ...(o.callMs ? { timeouts: { callMs: o.callMs } } : {}),
    }),
  download: (bytes) => ({ head: `{"success":true,"data":{"parcelId":7,"fileName":"a.x12","bytes":${bytes},"content":"`, tail: '"}}' }),
  list: {
    head: '{"success":true,"errorCode":"","message":"","data":[',
    record: (i) => `{"parcelId":${i},"mailboxId":1001,"fileName":"f-${i}.x12","bytes":10,"created":"2026-05-07T08:00:00Z"}`,
    sep: ',',
    tail: ']}',
  },
  endlessText: '{"success":true,"data":{"mailboxId":1001,"login":"',
  endlessElements: { head: '{"success":true,"data":{"mailboxId":1001,"x":[', unit: '[],' },
  session: rest({ mailboxId: 1001, userId: 1, login: 'erp' }),
  error: (text) => ({
    status: 400,
    type: 'application/json',
    body: JSON.stringify({ success: false, data: null, errorCode: 'InvalidParameter', message: text }),
  }),
  tooMany: {
    status: 429,
    type: 'application/json',
    body: JSON.stringify({ success: false, data: null, errorCode: 'TooManyRequests', message: 'slow down' }),
  },
  confirmOther: rest({ parcelId: 999, status: 'InBoxTransferred' }),
  confirmThis: rest({ parcelId: 7, status: 'InBoxArchived' }),
  info: (status) => rest({ parcelId: 7, mailboxId: 1001, fileName: 'a.x12', bytes: 5, status, created: '2026-05-07T08:00:00Z' }),
  login: (token) => rest({ token, expiresAt: new Date(Date.now() + 3600_000).toISOString() }),
};

const SOAP: Wire = {
  name: 'soap',
  kindOf: (req) => {
    const op = String(req.headers.soapaction ?? '')
      .replace(/"/g, '')
      .split('/')
      .pop();
    const kinds: Record<string, Kind> = {
      ParcelDownload: 'download',
      ParcelInBoxEx: 'list',
      WhoAmI: 'whoami',
      ParcelDownloadConfirm: 'confirm',
      ParcelInfo: 'info',
      Login: 'login',
    };
    return kinds[op ?? ''] ?? 'other';
  },
  client: (url, o) =>
    new SoapClient({
      url,
      auth: o.auth ?? { apiKey: API_KEY },
      maxAttempts: o.maxAttempts ?? 1,
      limits: o.limits ?? {},
      ...(o.callMs ? { timeouts: { callMs: o.callMs } } : {}),
    }),
  download: (bytes) => ({
    head: `${soapHead('ParcelDownload')}<ParcelID>7</ParcelID><FileName>a.x12</FileName><Bytes>${bytes}</Bytes><Content>`,
    tail: `</Content>${soapTail('ParcelDownload')}`,
  }),
  list: {
    head: `${soapHead('ParcelInBoxEx')}<ParcelIDInfoList>`,
    record: (i) => `<ParcelIDInfo><ParcelBytes>10</ParcelBytes><FileName>f-${i}.x12</FileName><ParcelID>${i}</ParcelID></ParcelIDInfo>`,
    sep: '',
    tail: `</ParcelIDInfoList>${soapTail('ParcelInBoxEx')}`,
  },
  endlessText: `${soapHead('WhoAmI')}<MailboxID>1001</MailboxID><LoginName>`,
  endlessElements: { head: `${soapHead('WhoAmI')}<MailboxID>1001</MailboxID>`, unit: '<x/>' },
  session: soap('WhoAmI', '<UserID>1</UserID><LoginName>erp</LoginName><MailboxID>1001</MailboxID>'),
  error: (text) => ({
    status: 500,
    type: 'text/xml; charset=utf-8',
    body:
      `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><soap:Fault>` +
      `<faultcode>soap:Client</faultcode><faultstring>${text}</faultstring><detail><ErrorInfo xmlns=""><ErrorCode>8</ErrorCode>` +
      `<ErrorString>${text}</ErrorString><ErrorItem>SessionID</ErrorItem><ErrorMessage>${text}</ErrorMessage></ErrorInfo></detail></soap:Fault></soap:Body></soap:Envelope>`,
  }),
  tooMany: { status: 429, type: 'text/plain', body: 'slow down' },
  confirmOther: soap('ParcelDownloadConfirm', 'false'),
  confirmThis: soap('ParcelDownloadConfirm', 'false'),
  info: (status) =>
    soap('ParcelInfo', `<ParcelBytes>5</ParcelBytes><FileName>a.x12</FileName><StatusCode>${status}</StatusCode><ParcelID>7</ParcelID>`),
  login: (token) => soap('Login', token),
};

function answer(res: ServerResponse, status: number, type: string, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': type, ...headers });
  res.end(body);
}

const typeOf = (wire: Wire): string => (wire.name === 'rest' ? 'application/json' : 'text/xml; charset=utf-8');

/** A download target whose attempts write to real files in a staging folder; counts every byte written. */
function staging(): { target: DownloadTarget; written: () => number; dir: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-both-'));
  let written = 0;
  let current: Writable | undefined;
  let n = 0;
  return {
    dir,
    written: () => written,
    target: {
      openAttempt: async () => {
        const file = fs.createWriteStream(path.join(dir, `attempt-${++n}.part`));
        // The file opens asynchronously: an attempt discarded before that (the test over, its folder
        // removed) must not end the run with ENOENT. Write errors still reach the client through cb.
        file.on('error', () => undefined);
        current = new Writable({
          write: (chunk: Buffer, _e, cb) => {
            written += chunk.length;
            file.write(chunk, cb);
          },
          destroy: (err, cb) => {
            file.destroy();
            cb(err);
          },
        });
        return current;
      },
      // The attempt's stream is destroyed, not only its file: a write still in flight then ends
      // quietly. (Destroying the file alone left that write to fail on a stream nobody listened to
      // any more: an uncaught ERR_STREAM_DESTROYED, seen once in a full run on Node 24.)
      discardAttempt: async () => {
        current?.destroy();
      },
    },
  };
}

describe.each([REST, SOAP])('one client core over $name', (wire) => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  /**
   * A test that runs beside others (`it.concurrent`: the three that mostly wait out their windows,
   * trickles and pauses) passes its context and cleans up when it ends itself, not in the shared list.
   */
  const keep = (ctx: TestContext | undefined, cleanup: () => Promise<void> | void): void => {
    if (ctx) ctx.onTestFinished(cleanup);
    else cleanups.push(cleanup);
  };
  const start = async (handler: Handler, ctx?: TestContext): Promise<Hostile> => {
    const s = await hostile(wire, handler);
    keep(ctx, () => s.close());
    return s;
  };
  const client = (url: string, o: Parameters<Wire['client']>[1] = {}, ctx?: TestContext): Client => {
    const c = wire.client(url, o);
    keep(ctx, () => c.close());
    return c;
  };
  const stage = (ctx?: TestContext): ReturnType<typeof staging> => {
    const s = staging();
    keep(ctx, () => fs.rmSync(s.dir, { recursive: true, force: true }));
    return s;
  };

  it('a download longer than listed and declared stops at the first byte past the declared size', async () => {
    const { head, tail } = wire.download(5);
    const s = await start((_k, res, count) => {
      res.writeHead(200, { 'content-type': typeOf(wire) });
      pump(res, count, head, repeat('QUFB', 64 * MiB), tail); // "AAA" for 48 MiB
    });
    const st = stage();
    const err = await client(s.url)
      .downloadParcel(7, st.target, { expectedBytes: 5 })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'GRID_CONTENT_INTEGRITY', reason: 'byte-mismatch' });
    expect(st.written()).toBeLessThanOrEqual(5);
    expect(s.sent()).toBeLessThan(32 * MiB);
  });

  it('without a listed size, api.limits.maxParcelBytes caps a download whatever size the answer declares', async () => {
    const { head, tail } = wire.download(2_000_000_000);
    const s = await start((_k, res, count) => {
      res.writeHead(200, { 'content-type': typeOf(wire) });
      pump(res, count, head, repeat('QUFB', 64 * MiB), tail);
    });
    const st = stage();
    const err = await client(s.url, { limits: { maxParcelBytes: MiB } })
      .downloadParcel(7, st.target)
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'GRID_CONTENT_INTEGRITY', reason: 'byte-mismatch' });
    expect(st.written()).toBeLessThanOrEqual(MiB);
    expect(s.sent()).toBeLessThan(32 * MiB);
  });

  it("a download that runs past its destination's room stops before the first byte past it, whatever size it declared", async () => {
    const { head, tail } = wire.download(1_000_000_000);
    const s = await start((_k, res, count) => {
      res.writeHead(200, { 'content-type': typeOf(wire) });
      pump(res, count, head, repeat('QUFB', 64 * MiB), tail);
    });
    const st = stage();
    const err = await client(s.url)
      .downloadParcel(7, st.target, { roomBytes: MiB })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'GRID_DOWNLOAD_NO_ROOM', roomBytes: MiB });
    expect(st.written()).toBeLessThanOrEqual(MiB);
    expect(s.sent()).toBeLessThan(32 * MiB);
  });

  it('a list of 300,000 records keeps api.limits.maxListEntries of them and counts the rest', async () => {
    const total = 300_000;
    const s = await start((_kind, res, count) => {
      res.writeHead(200, { 'content-type': typeOf(wire) });
      let i = 0;
      pump(
        res,
        count,
        wire.list.head,
        () => {
          if (i >= total) return undefined;
          const parts: string[] = [];
          for (let k = 0; k < 1000 && i < total; k++, i++) parts.push((i > 0 ? wire.list.sep : '') + wire.list.record(i + 1));
          return parts.join('');
        },
        wire.list.tail,
      );
    });
    const rssBefore = process.memoryUsage().rss;
    const pending = await client(s.url, { limits: { maxListEntries: 100, maxBodyBytes: MiB } }).pendingInbox(1001);
    expect(pending.parcels).toHaveLength(100);
    expect(pending.omitted).toBe(total - 100);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(256 * MiB);
  }, 60_000);

  it('a successful answer that never ends is refused at api.limits.maxBodyBytes, not buffered', async () => {
    const s = await start((_k, res, count) => {
      res.writeHead(200, { 'content-type': typeOf(wire) });
      pump(res, count, wire.endlessText, repeat('x', 64 * MiB));
    });
    const err = await client(s.url, { limits: { maxBodyBytes: MiB } })
      .sessionContext()
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'GRID_LIMIT_EXCEEDED', limitKey: 'api.limits.maxBodyBytes' });
    expect(s.sent()).toBeLessThan(32 * MiB);
  });

  it('an answer of empty elements without end is refused at a limit before it grows a tree', async () => {
    const s = await start((_k, res, count) => {
      res.writeHead(200, { 'content-type': typeOf(wire) });
      pump(res, count, wire.endlessElements.head, repeat(wire.endlessElements.unit, 4 * MiB));
    });
    const err = await client(s.url, { limits: { maxBodyBytes: MiB, maxListEntries: 10 } })
      .sessionContext()
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'GRID_LIMIT_EXCEEDED' });
  }, 60_000);

  it.concurrent(
    'a download trickling 4 base64 characters every 2 s ends within api.limits.rateWindowMs and api.timeouts.callMs',
    async (ctx) => {
      const { head } = wire.download(3000);
      const s = await start((_k, res) => {
        res.writeHead(200, { 'content-type': typeOf(wire) });
        res.write(head);
        const t = setInterval(() => res.write('QUFB'), 2000);
        res.on('close', () => clearInterval(t));
      }, ctx);
      const st = stage(ctx);
      const started = Date.now();
      const err = await client(s.url, { limits: { rateWindowMs: 5000, minBytesPerSecond: 1024 }, callMs: 5000 }, ctx)
        .downloadParcel(7, st.target)
        .catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'GRID_TRANSPORT_ERROR', transportCode: 'GRIDSYNC_TOO_SLOW' });
      // Two windows at most, with a wide margin for a loaded machine; the old SOAP path never ended.
      expect(Date.now() - started).toBeLessThan(15_000);
    },
    40_000,
  );

  it.concurrent(
    'a download that outlasts rate windows reports its growing byte count at each, and none once it is done',
    async (ctx) => {
      const { head, tail } = wire.download(24_000);
      const s = await start((_k, res) => {
        res.writeHead(200, { 'content-type': typeOf(wire) });
        res.write(head);
        // 32,000 base64 characters (24,000 bytes) in 16 pieces, one every 100 ms: ~1.6 s.
        let pieces = 0;
        const t = setInterval(() => {
          res.write('QUFB'.repeat(500));
          if (++pieces === 16) {
            clearInterval(t);
            res.end(tail);
          }
        }, 100);
        res.on('close', () => clearInterval(t));
      }, ctx);
      const st = stage(ctx);
      const reports: number[] = [];
      const info = await client(s.url, { limits: { rateWindowMs: 300, minBytesPerSecond: 1 } }, ctx).downloadParcel(7, st.target, {
        onProgress: (n) => reports.push(n),
      });
      expect(info.bytes).toBe(24_000);
      expect(reports.length).toBeGreaterThanOrEqual(2);
      for (let i = 1; i < reports.length; i++) expect(reports[i]).toBeGreaterThan(reports[i - 1] as number);
      expect(Math.max(...reports)).toBeLessThanOrEqual(24_000);
      const after = reports.length;
      await new Promise((r) => setTimeout(r, 700));
      expect(reports.length).toBe(after); // the window's timer ended with the download
    },
    30_000,
  );

  it.concurrent(
    'a 429 pauses every request of the client until its Retry-After has passed',
    async (ctx) => {
      const s = await start((kind, res, _count, n) => {
        if (kind === 'whoami' && n === 1)
          return answer(res, wire.tooMany.status, wire.tooMany.type, wire.tooMany.body, { 'retry-after': '2' });
        answer(res, 200, typeOf(wire), wire.session);
      }, ctx);
      const c = client(s.url, { maxAttempts: 2 }, ctx);
      const first = c.sessionContext();
      // A second call, sent while the first one's pause is in force, waits for it too.
      await new Promise((r) => setTimeout(r, 300));
      const second = c.sessionContext();
      await Promise.all([first, second]);
      expect(c.rateLimitPauses).toBe(1);
      const [limited, ...later] = s.arrivals.filter((a) => a.kind === 'whoami');
      expect(later).toHaveLength(2);
      for (const a of later) expect(a.at - (limited?.at ?? 0)).toBeGreaterThanOrEqual(1500);
    },
    20_000,
  );

  it('an error text that quotes the API key reaches the caller with the key masked', async () => {
    const s = await start((_k, res) => {
      const e = wire.error(`sender not allowed for API key ${API_KEY}`);
      answer(res, e.status, e.type, e.body);
    });
    const err = (await client(s.url)
      .sessionContext()
      .catch((e: unknown) => e)) as Error & Record<string, unknown>;
    expect(err.message).toContain('***');
    expect(JSON.stringify({ ...err, message: err.message, stack: err.stack })).not.toContain(API_KEY);
  });

  it('an error text that quotes the session token issued at login is masked too', async () => {
    const s = await start((kind, res) => {
      if (kind === 'login') return answer(res, 200, typeOf(wire), wire.login(TOKEN));
      const e = wire.error(`session ${TOKEN} may not do this`);
      answer(res, e.status, e.type, e.body);
    });
    const err = (await client(s.url, { auth: { login: 'erp', password: 'pw-secret-99' } })
      .sessionContext()
      .catch((e: unknown) => e)) as Error;
    expect(err.message).not.toContain(TOKEN);
    expect(err.message).toContain('***');
  });

  it('a login the service keeps refusing with 503 is tried maxAttempts times per call, not once more per attempt of the call', async () => {
    // The login runs its own attempts; the call retried it as a failed attempt of its own, so one
    // call made maxAttempts² logins (9 with the defaults, up to callMs each against a held login).
    const s = await start((kind, res) => {
      if (kind === 'login') return answer(res, 503, 'text/plain', 'unavailable');
      answer(res, 200, typeOf(wire), wire.session);
    });
    const err = await client(s.url, { auth: { login: 'erp', password: 'pw-secret-99' }, maxAttempts: 3 })
      .sessionContext()
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ httpStatus: 503 });
    expect(s.arrivals.filter((a) => a.kind === 'login')).toHaveLength(3);
    expect(s.arrivals.filter((a) => a.kind === 'whoami')).toHaveLength(0);
  }, 30_000);

  it('a confirm answered about another parcel (or SOAP false with the parcel still InBoxTransferred) is not a confirm', async () => {
    const s = await start((kind, res) => {
      if (kind === 'confirm') return answer(res, 200, typeOf(wire), wire.confirmOther);
      answer(res, 200, typeOf(wire), wire.info('InBoxTransferred'));
    });
    const err = await client(s.url)
      .confirmParcel(7)
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'GRID_CONFIRM_NOT_TAKEN', parcelId: 7 });
  });

  it('a confirm answered about this parcel (or SOAP false with the parcel InBoxArchived) is a confirm', async () => {
    const s = await start((kind, res) => {
      if (kind === 'confirm') return answer(res, 200, typeOf(wire), wire.confirmThis);
      answer(res, 200, typeOf(wire), wire.info('InBoxArchived'));
    });
    await expect(client(s.url).confirmParcel(7)).resolves.toBeUndefined();
  });
});

describe('the API key header', () => {
  it('is sent spelled X-API-Key', async () => {
    let names: string[] = [];
    const server = http.createServer((req, res) => {
      names = req.rawHeaders.filter((_h, i) => i % 2 === 0);
      res.writeHead(200, { 'content-type': 'application/json' }).end(REST.session);
    });
    server.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const c = new GridClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, auth: { apiKey: API_KEY } });
    try {
      await c.sessionContext();
    } finally {
      await c.close();
      server.close();
    }
    expect(names).toContain('X-API-Key');
  });
});
