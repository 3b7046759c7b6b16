import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  catalog,
  GridApiError,
  GridClient,
  GridConfigError,
  GridResponseError,
  GridTransportError,
  UploadOutcomeUnknownError,
  type GridClientOptions,
} from '../../../src/api/index.js';
import { envelope, raw, reset, startScriptedServer, type ScriptedServer } from '../../helpers/api-server.js';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

let s: ScriptedServer;
let client: GridClient;
let slept: number[];

beforeEach(async () => {
  s = await startScriptedServer();
  slept = [];
});
afterEach(async () => {
  await client?.close();
  await s.close();
});

const make = (over: Partial<GridClientOptions> = {}): GridClient => {
  client = new GridClient({
    baseUrl: s.url,
    auth: { apiKey: 'k-123' },
    sleep: async (ms) => void slept.push(ms),
    random: () => 0.5,
    ...over,
  });
  return client;
};

const parcel = { parcelId: 7, mailboxId: 1001, networkId: 1, fileName: 'a.x12', bytes: 3 };

describe('GridClient transport', () => {
  it('sends X-API-Key exactly, a gridsync User-Agent, JSON bodies; accepts all three success envelope forms', async () => {
    s.script(
      envelope([parcel]),
      raw(200, JSON.stringify({ success: true, data: [parcel], errorCode: '', message: '' })),
      raw(200, JSON.stringify({ success: true, data: [parcel] })),
    );
    const c = make();
    for (let i = 0; i < 3; i++) expect(await c.call(catalog.parcels.pendingInboxList, { mailboxId: 1001 })).toEqual([parcel]);
    const r = s.requests[0]!;
    expect(r.headers['x-api-key']).toBe('k-123');
    expect(r.headers['user-agent']).toMatch(/^gridsync\/\d+\.\d+\.\d+/);
    expect(r.headers['content-type']).toBe('application/json');
    expect(JSON.parse(r.body)).toEqual({ mailboxId: 1001 });
    expect(r.method).toBe('POST');
    expect(r.url).toBe('/v2/parcels/pending-inbox-list');
  });

  it('puts path parameters in the path and GET fields in the query string', async () => {
    s.script(envelope({ ...parcel, status: 'InBoxReady' }));
    await make().call(catalog.parcels.get, { parcelId: 42 });
    expect(s.requests[0]?.url).toBe('/v2/parcels/42');
    expect(s.requests[0]?.body).toBe('');
  });

  it.each([
    [400, 'InvalidParameter'],
    [401, 'InvalidAPIKey'],
    [403, 'AccessDenied'],
    [404, 'ObjectNotFound'],
  ])('never retries HTTP %i and reports it as GridApiError with the errorCode', async (status, code) => {
    s.script(envelope(code, status));
    const err = await make()
      .call(catalog.parcels.confirm, { parcelId: 1 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GridApiError);
    expect(err).toMatchObject({ httpStatus: status, errorCode: code, endpoint: 'parcels.confirm' });
    expect(s.requests).toHaveLength(1);
  });

  it('retries 429, 500 and 503 up to 3 attempts with backoff, honouring Retry-After seconds', async () => {
    s.script(envelope('RateLimitExceeded', 429, { 'retry-after': '7' }), envelope('InternalError', 500), envelope(true));
    expect(await make().call(catalog.parcels.confirm, { parcelId: 1 })).toBe(true);
    expect(s.requests).toHaveLength(3);
    // Retry-After counts from the answer: the time the client took to read it may come off (real clock).
    expect(slept[0]).toBeGreaterThan(5000);
    expect(slept[0]).toBeLessThanOrEqual(7000);
    expect(slept[1]).toBeGreaterThanOrEqual(0);
    expect(slept[1]).toBeLessThan(1000);
  });

  it('honours Retry-After as an HTTP-date', async () => {
    const now = Date.parse('2026-11-22T12:00:00Z');
    s.script(envelope('RateLimitExceeded', 429, { 'retry-after': new Date(now + 4000).toUTCString() }), envelope(true));
    await make({ now: () => now }).call(catalog.parcels.confirm, { parcelId: 1 });
    expect(slept).toEqual([4000]);
  });

  it('gives up after maxAttempts and surfaces the last error', async () => {
    s.script(envelope(null, 503));
    const err = await make({ maxAttempts: 4 })
      .call(catalog.parcels.confirm, { parcelId: 1 })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ httpStatus: 503 });
    expect(s.requests).toHaveLength(4);
  });

  it('retries a reset for an idempotent call', async () => {
    s.script(reset, envelope(true));
    expect(await make().call(catalog.parcels.confirm, { parcelId: 1 })).toBe(true);
    expect(s.requests).toHaveLength(2);
  });

  it('names the endpoint and the offending field when data does not match the schema', async () => {
    s.script(envelope([parcel, { ...parcel, parcelId: 'seven' }]));
    const err = await make()
      .call(catalog.parcels.pendingInboxList, {})
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GridResponseError);
    expect(err).toMatchObject({ endpoint: 'parcels.pendingInboxList', field: 'data[1].parcelId' });
  });

  it('turns an HTML error page, an empty body and a problem-details body into typed errors', async () => {
    s.script(
      raw(502, '<html><body>Bad gateway</body></html>', { 'content-type': 'text/html' }),
      raw(200, ''),
      raw(400, JSON.stringify({ title: 'Bad Request', detail: 'pageNo must be at least 1', traceId: 'x' })),
    );
    const c = make({ maxAttempts: 1 });
    const html = await c.call(catalog.parcels.confirm, { parcelId: 1 }).catch((e: unknown) => e);
    expect(html).toMatchObject({ httpStatus: 502, errorCode: null });
    const empty = await c.call(catalog.parcels.confirm, { parcelId: 1 }).catch((e: unknown) => e);
    expect(empty).toBeInstanceOf(GridResponseError);
    const problem = await c.call(catalog.parcels.confirm, { parcelId: 1 }).catch((e: unknown) => e);
    expect(problem).toMatchObject({ httpStatus: 400, serviceMessage: 'pageNo must be at least 1' });
  });

  it('reports a refused connection as a transport error that provably did not send', async () => {
    const port = new URL(s.url).port;
    await s.close();
    const err = await make({ baseUrl: `http://127.0.0.1:${port}`, maxAttempts: 2 })
      .call(catalog.parcels.confirm, { parcelId: 1 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GridTransportError);
    expect(err).toMatchObject({ transportCode: 'ECONNREFUSED', notSent: true });
    expect(slept).toHaveLength(1);
    s = await startScriptedServer();
  });

  it('refuses plain http to a remote host unless allowed, and requires credentials', () => {
    expect(() => new GridClient({ baseUrl: 'http://edi.example.com', auth: { apiKey: 'k' } })).toThrow(GridConfigError);
    expect(() =>
      new GridClient({ baseUrl: 'http://edi.example.com', auth: { apiKey: 'k' }, allowInsecureHttp: true }).close(),
    ).not.toThrow();
    expect(() => new GridClient({ baseUrl: 'https://edi.example.com', auth: { apiKey: '' } })).toThrow(/credentials/);
  });
});

describe('GridClient bearer auth', () => {
  const login = (token: string, expiresAt: string, refreshToken?: string) =>
    envelope({ token, expiresAt, userId: 1, ...(refreshToken ? { refreshToken } : {}) });

  it('logs in, uses the bearer token, logs in again once on InvalidSession, then fails', async () => {
    const future = new Date(Date.now() + 3_600_000).toISOString();
    s.script(login('t1', future), envelope('InvalidSession', 401), login('t2', future), envelope(true));
    const c = make({ auth: { login: 'erp', password: 'pw' } });
    expect(await c.call(catalog.parcels.confirm, { parcelId: 1 })).toBe(true);
    expect(s.requests.map((r) => `${r.url} ${r.headers.authorization ?? ''}`)).toEqual([
      '/v2/auth/login ',
      '/v2/parcels/confirm Bearer t1',
      '/v2/auth/login ',
      '/v2/parcels/confirm Bearer t2',
    ]);
    expect(JSON.parse(s.requests[0]!.body)).toEqual({ login: 'erp', password: 'pw' });

    s.requests.length = 0;
    s.script(envelope('InvalidSession', 401), login('t3', future), envelope('InvalidSession', 401));
    const err = await c.call(catalog.parcels.confirm, { parcelId: 1 }).catch((e: unknown) => e);
    expect(err).toMatchObject({ httpStatus: 401, errorCode: 'InvalidSession' });
    expect(s.requests.filter((r) => r.url === '/v2/auth/login')).toHaveLength(1);
  });

  it('refreshes with the refresh token before expiry, and logs out on close', async () => {
    let now = Date.parse('2026-11-22T12:00:00Z');
    s.script(
      login('t1', '2026-11-22T13:00:00Z', 'r1'),
      envelope(true),
      login('t2', '2026-11-22T14:00:00Z', 'r2'),
      envelope(true),
      envelope(null),
    );
    const c = make({ auth: { login: 'erp', password: 'pw' }, now: () => now });
    await c.call(catalog.parcels.confirm, { parcelId: 1 });
    now = Date.parse('2026-11-22T12:57:00Z');
    await c.call(catalog.parcels.confirm, { parcelId: 1 });
    await c.close();
    await c.close();
    expect(s.requests.map((r) => r.url)).toEqual([
      '/v2/auth/login',
      '/v2/parcels/confirm',
      '/v2/auth/refresh',
      '/v2/parcels/confirm',
      '/v2/auth/logout',
    ]);
    expect(JSON.parse(s.requests[2]!.body)).toEqual({ refreshToken: 'r1' });
    expect(s.requests[4]?.headers.authorization).toBe('Bearer t2');
  });
});

describe('GridClient upload', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-up-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('streams the file base64-encoded into the JSON body with its byte count', async () => {
    const file = path.join(dir, 'f.bin');
    const content = Buffer.from(Array.from({ length: 100_000 }, (_, i) => (i * 31) % 256));
    fs.writeFileSync(file, content);
    s.script(envelope(123));
    expect(await make().uploadParcel(file, { fileName: 'f.bin', gridIdFrom: 1, gridIdTo: 2 })).toEqual({ parcelId: 123 });
    const body = JSON.parse(s.requests[0]!.body);
    expect(body).toMatchObject({ fileName: 'f.bin', bytes: 100_000, gridIdFrom: 1, gridIdTo: 2 });
    expect(Buffer.from(body.content, 'base64').equals(content)).toBe(true);
    expect(Number(s.requests[0]!.headers['content-length'])).toBe(s.requests[0]!.body.length);
  });

  it('is not retried once the body may have reached the service; is retried after a 429', async () => {
    const file = path.join(dir, 'f.x12');
    fs.writeFileSync(file, 'ISA');
    s.script(reset);
    const err = await make()
      .uploadParcel(file, { fileName: 'f.x12' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UploadOutcomeUnknownError);
    expect(s.requests).toHaveLength(1);
    s.script(envelope(null, 500));
    expect(
      await make()
        .uploadParcel(file, { fileName: 'f.x12' })
        .catch((e: unknown) => e),
    ).toBeInstanceOf(UploadOutcomeUnknownError);
    s.requests.length = 0;
    s.script(envelope('RateLimitExceeded', 429, { 'retry-after': '1' }), envelope({ parcelId: 9, fileName: 'f.x12' }));
    expect(await make().uploadParcel(file, { fileName: 'f.x12' })).toEqual({ parcelId: 9 });
    expect(s.requests).toHaveLength(2);
  });
});
