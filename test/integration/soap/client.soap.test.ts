// The SOAP client against the emulator (the workflow, sessions, faults, retries, 64-bit ids) and
// against scripted servers that are not our emulator (other prefixes, unknown elements, order,
// offsets in dates, broken content).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ContentIntegrityError, GridApiError, GridResponseError, UploadOutcomeUnknownError } from '../../../src/api/errors.js';
import { SoapClient } from '../../../src/api/soap/client.js';
import { SoapFaultError } from '../../../src/api/soap/errors.js';
import { startEmulator, type Emulator } from '@gridsync/emulator';

let emu: Emulator;
let dir: string;
const clients: SoapClient[] = [];
const sleeps: number[] = [];
const client = (
  auth: ConstructorParameters<typeof SoapClient>[0]['auth'],
  url = emu.url,
  extra: Partial<ConstructorParameters<typeof SoapClient>[0]> = {},
): SoapClient => {
  const c = new SoapClient({ url, auth, sleep: async (ms) => void sleeps.push(ms), random: () => 0, ...extra });
  clients.push(c);
  return c;
};

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-soapc-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  await emu?.close();
  sleeps.length = 0;
});

async function download(
  c: SoapClient,
  id: number,
  expectedBytes?: number,
): Promise<{ info: Awaited<ReturnType<SoapClient['downloadParcel']>>; data: Buffer }> {
  const sink = new PassThrough();
  const chunks: Buffer[] = [];
  // Copies: the client reuses its buffer once the writable's write callback has fired (as a file stream's does).
  sink.on('data', (d: Buffer) => chunks.push(Buffer.from(d)));
  const info = await c.downloadParcel(id, sink, expectedBytes === undefined ? {} : { expectedBytes });
  return { info, data: Buffer.concat(chunks) };
}

describe('SoapClient against the emulator', () => {
  it('runs the inbound and outbound workflow with an API key', async () => {
    emu = await startEmulator({ settings: { acknowledgeDelayMs: 60_000 } });
    const c = client({ apiKey: 'demo-key-1001' });
    expect(await c.sessionContext()).toEqual({ mailboxId: 1001, userId: 11, login: 'erp' });
    const content = Buffer.from('ISA*00*hello soap & <xml>~');
    const id = await emu.inject({ mailboxId: 1001, fileName: 'in & <1>.x12', content, gridIdFrom: 5002, gridIdTo: 5001 });
    const pending = (await c.pendingInbox(1001)).parcels;
    expect(pending).toEqual([
      expect.objectContaining({ parcelId: id, fileName: 'in & <1>.x12', bytes: content.length, status: 'InBoxReady' }),
    ]);
    const { info, data } = await download(c, id, content.length);
    expect(data.toString()).toBe(content.toString());
    expect(info).toEqual({
      parcelId: id,
      fileName: 'in & <1>.x12',
      bytes: content.length,
      declaredBytes: content.length,
      sha256: createHash('sha256').update(content).digest('hex'),
    });
    await c.confirmParcel(id);
    await c.confirmParcel(id); // repeated confirm: fine
    expect((await c.parcel(id)).status).toBe('InBoxTransferred');
    expect((await c.pendingInbox(1001)).parcels).toEqual([]);
    const file = path.join(dir, 'out.edi');
    fs.writeFileSync(file, 'hello partner');
    const since = new Date(Date.now() - 60_000).toISOString();
    const { parcelId } = await c.uploadParcel(file, { fileName: 'out.edi', gridIdFrom: 5001, gridIdTo: 5002 });
    const { parcelId: second } = await c.uploadParcel(file, { fileName: 'out2.edi', gridIdFrom: 5001, gridIdTo: 5002, mailboxId: 1001 });
    const outbox = [];
    for await (const p of c.outboxParcels({ mailboxId: 1001, since })) outbox.push(p);
    expect(outbox.map((p) => [p.parcelId, p.fileName, p.bytes])).toEqual([
      [parcelId, 'out.edi', 13],
      [second, 'out2.edi', 13],
    ]);
    expect(await c.call('ParcelInfo', { ParcelID: String(parcelId) })).toMatchObject({ Direction: 'OutBox', ParcelID: String(parcelId) });
  });

  it('logs in once, re-logs in once on a session fault, and logs out on close', async () => {
    emu = await startEmulator({ settings: { acknowledgeDelayMs: 60_000, soap: { maxSessionsPerUser: 2 } } });
    const c = new SoapClient({ url: emu.url, auth: { login: 'erp', password: 'Demo-pass1' } });
    const first = ((await c.call('WhoAmI')) as { SessionID: string }).SessionID;
    expect(((await c.call('WhoAmI')) as { SessionID: string }).SessionID).toBe(first);
    await fetch(`${emu.url}/_emulator/soap/expire-sessions`, { method: 'POST' });
    const second = ((await c.call('WhoAmI')) as { SessionID: string }).SessionID;
    expect(second).not.toBe(first);
    await c.close();
    // Logged out: both slots are free again, so two more logins succeed.
    const a = new SoapClient({ url: emu.url, auth: { login: 'erp', password: 'Demo-pass1' } });
    const b = new SoapClient({ url: emu.url, auth: { login: 'erp', password: 'Demo-pass1' } });
    clients.push(a, b);
    await a.sessionContext();
    await b.sessionContext();
  });

  it('a wrong API key or password is permanent (401/403), never retried', async () => {
    emu = await startEmulator();
    const bad = client({ apiKey: '0A0A0A0A-0000-0000-0000-000000000000' });
    const err = (await bad.sessionContext().catch((e: unknown) => e)) as SoapFaultError;
    expect(err).toBeInstanceOf(SoapFaultError);
    expect(err).toMatchObject({
      httpStatus: 401,
      errorCode: 'InvalidSession',
      soapErrorCode: 5,
      errorItem: 'SessionID',
      faultCode: 'Client',
      retryable: false,
    });
    const wrong = client({ login: 'erp', password: 'nope' });
    await expect(wrong.sessionContext()).rejects.toMatchObject({ httpStatus: 403, errorCode: 'AccessDenied', soapErrorCode: 3 });
    expect(sleeps).toEqual([]);
  });

  it('retries 503, resets and soap:Server faults on reads; an upload with an unknown outcome is not repeated', async () => {
    emu = await startEmulator({ settings: { acknowledgeDelayMs: 60_000 } });
    const c = client({ apiKey: 'demo-key-1001' }, emu.url, { maxAttempts: 3 });
    emu.setFaults({ rules: [{ endpoint: 'parcels.pendingInboxList', rate503: 1 }] });
    await expect(c.pendingInbox(1001)).rejects.toMatchObject({ httpStatus: 503 });
    expect(sleeps.length).toBe(2);
    emu.setFaults({ rules: [{ endpoint: 'users.me', rate500: 1 }] });
    await expect(c.sessionContext()).rejects.toMatchObject({ faultCode: 'Server', soapErrorCode: 12, retryable: true });
    expect(sleeps.length).toBe(4);
    const file = path.join(dir, 'u.edi');
    fs.writeFileSync(file, 'x'.repeat(1000));
    for (const rule of [{ rate500: 1 }, { resetAfterRate: 1 }, { resetBeforeRate: 1 }]) {
      emu.setFaults({ rules: [{ endpoint: 'parcels.upload', ...rule }] });
      await expect(c.uploadParcel(file, { fileName: 'u.edi', gridIdFrom: 5001, gridIdTo: 5002 })).rejects.toBeInstanceOf(
        UploadOutcomeUnknownError,
      );
    }
    expect(sleeps.length).toBe(4);
    emu.setFaults({ rules: [{ endpoint: 'parcels.upload', rate429: 1, retryAfterSeconds: 2 }] });
    await expect(c.uploadParcel(file, { fileName: 'u.edi', gridIdFrom: 5001, gridIdTo: 5002 })).rejects.toMatchObject({ httpStatus: 429 });
    // Each wait is the Retry-After (2 s) counted from the answer, less what has passed since it came:
    // a loaded machine spends a millisecond or more in between (1999 seen in a CI run).
    const waits = sleeps.slice(4);
    expect(waits).toHaveLength(2);
    for (const ms of waits) {
      expect(ms).toBeGreaterThan(1_900);
      expect(ms).toBeLessThanOrEqual(2_000);
    }
  });

  it('download: a truncated body or a wrong declared size is an integrity error, never a short file', async () => {
    emu = await startEmulator();
    const c = client({ apiKey: 'demo-key-1001' });
    const content = Buffer.alloc(300_000, 65);
    const id = await emu.inject({ mailboxId: 1001, fileName: 'big.txt', content });
    emu.setFaults({ rules: [{ endpoint: 'parcels.download', wrongBytesRate: 1 }] });
    await expect(download(c, id)).rejects.toMatchObject({ reason: 'byte-mismatch' });
    emu.setFaults({ rules: [{ endpoint: 'parcels.download', truncateRate: 1 }] });
    await expect(download(c, id)).rejects.toBeInstanceOf(ContentIntegrityError);
    emu.setFaults({});
    await expect(download(c, id, 12)).rejects.toMatchObject({ reason: 'byte-mismatch' });
    expect((await download(c, id)).data.equals(content)).toBe(true);
  });

  it('keeps 64-bit ids exact and refuses to journal one beyond 2^53', async () => {
    emu = await startEmulator({ settings: { soap: { parcelIdOffset: '9223372036854000000' } } });
    const c = client({ apiKey: 'demo-key-1001' });
    const id = await emu.inject({ mailboxId: 1001, fileName: 'a.txt', content: Buffer.from('a') });
    const inbox = (await c.call('ParcelInBox')) as { ParcelIDInfoList: { ParcelID: string }[] };
    expect(inbox.ParcelIDInfoList[0]?.ParcelID).toBe((9223372036854000000n + BigInt(id)).toString());
    const pending = await c.pendingInbox(1001);
    expect(pending.parcels).toEqual([]);
    expect(pending.unreadable).toEqual([
      expect.objectContaining({ fileName: 'a.txt', roughId: (9223372036854000000n + BigInt(id)).toString() }),
    ]);
    expect(pending.unreadable[0]?.error).toBeInstanceOf(GridResponseError);
  });

  it('reports the parcels a capped inbox answer left out', async () => {
    emu = await startEmulator({ settings: { soap: { inboxCap: 2 } } });
    const c = client({ apiKey: 'demo-key-1001' });
    for (let i = 0; i < 3; i++) await emu.inject({ mailboxId: 1001, fileName: `p${i}.txt`, content: Buffer.from('p') });
    const pending = await c.pendingInbox(1001);
    expect(pending.parcels.map((p) => p.fileName)).toEqual(['p0.txt', 'p1.txt']);
    expect(pending.omitted).toBe(1);
  });
});

describe('SoapClient against servers that are not our emulator', () => {
  let server: http.Server;
  let url: string;
  let reply: (req: http.IncomingMessage, body: string) => { status: number; type?: string; body: string };
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        const r = reply(req, body);
        res.writeHead(r.status, { 'content-type': r.type ?? 'text/xml; charset=utf-8' });
        res.end(r.body);
      });
    });
    server.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v4.1/prod/GridOS.asmx`;
  });
  afterAll(() => new Promise((r) => server.close(r)));
  const env = (inner: string): string =>
    `<?xml version="1.0"?><S:Envelope xmlns:S="http://schemas.xmlsoap.org/soap/envelope/"><S:Body>${inner}</S:Body></S:Envelope>`;

  it('sends a quoted SOAPAction and escapes values; reads records with other prefixes, unknown elements, any order and date forms', async () => {
    let seen: { action?: string; body: string } = { body: '' };
    reply = (req, body) => {
      seen = { action: req.headers.soapaction as string, body };
      return {
        status: 200,
        body: env(`<r:ParcelInBoxExResponse xmlns:r="https://os.grid.example/"><r:ParcelInBoxExResult><r:Surprise>1</r:Surprise><r:Count>1</r:Count>
          <r:ParcelIDInfoList><r:ParcelIDInfo><r:ParcelID>77</r:ParcelID><r:FileName>x.edi</r:FileName><r:NewThing><r:Deep/></r:NewThing>
          <r:ParcelBytes>12</r:ParcelBytes><r:ParcelDate>2026-05-07T10:00:00.1234567+02:00</r:ParcelDate><r:StatusCode>somethingNew</r:StatusCode>
          <r:Interchanges><r:InterchangeIDInfo><r:TPFrom><r:GridID>5</r:GridID></r:TPFrom><r:TPTo><r:GridID>6</r:GridID></r:TPTo></r:InterchangeIDInfo></r:Interchanges>
          </r:ParcelIDInfo></r:ParcelIDInfoList></r:ParcelInBoxExResult></r:ParcelInBoxExResponse>`),
      };
    };
    const c = client({ apiKey: 'key<&>' }, url);
    expect((await c.pendingInbox(1001)).parcels).toEqual([
      {
        parcelId: 77,
        fileName: 'x.edi',
        bytes: 12,
        created: '2026-05-07T08:00:00.123Z',
        status: 'somethingNew',
        gridIdFrom: 5,
        gridIdTo: 6,
      },
    ]);
    expect(seen.action).toBe('"https://os.grid.example/ParcelInBoxEx"');
    expect(seen.body).toContain('<SessionID>key&lt;&amp;&gt;</SessionID><NetworkID>0</NetworkID><MailboxID>1001</MailboxID>');
  });

  it('a proxy page with 502 is retryable; a fault without the detail is decided by its faultcode', async () => {
    reply = () => ({ status: 502, type: 'text/html', body: '<html>Bad gateway</html>' });
    const c = client({ apiKey: 'k' }, url, { maxAttempts: 2 });
    await expect(c.sessionContext()).rejects.toMatchObject({ httpStatus: 502 });
    expect(sleeps.length).toBe(1); // a gateway's 502 is retried, as over REST
    reply = () => ({
      status: 500,
      body: env(
        '<S:Fault><faultcode>S:Server</faultcode><faultstring>Server was unable to process request.</faultstring><detail/></S:Fault>',
      ),
    });
    await expect(c.sessionContext()).rejects.toMatchObject({ faultCode: 'Server', retryable: true, errorCode: 'InternalError' });
    expect(sleeps.length).toBe(2);
  });

  it('download: invalid base64 and a response for another parcel are refused', async () => {
    const fileInfo = (id: string, content: string): string =>
      env(
        `<ParcelDownloadResponse xmlns="https://os.grid.example/"><ParcelDownloadResult><ParcelID>${id}</ParcelID><FileName>f</FileName><Bytes>3</Bytes><Content>${content}</Content></ParcelDownloadResult></ParcelDownloadResponse>`,
      );
    const c = client({ apiKey: 'k' }, url);
    reply = () => ({ status: 200, body: fileInfo('9', 'YW@j') });
    await expect(download(c, 9)).rejects.toMatchObject({ reason: 'invalid-base64' });
    reply = () => ({ status: 200, body: fileInfo('10', 'YWJj') });
    await expect(download(c, 9)).rejects.toBeInstanceOf(GridResponseError);
    reply = () => ({ status: 200, body: fileInfo('9', 'YW\n Jj') });
    expect((await download(c, 9)).data.toString()).toBe('abc');
    reply = () => ({ status: 429, type: 'text/plain', body: 'slow down' });
    await expect(download(c, 9)).rejects.toBeInstanceOf(GridApiError);
  });
});
