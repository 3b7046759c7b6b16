// Requests of hundreds of MB to the emulator as a process (`gridsync emulator`, the code that also
// runs in-process with `baseUrl: embedded`): an unauthenticated SOAP envelope of endless elements,
// a SOAP upload with a forged session or content before the session, a REST upload without
// credentials. Each is refused after a small part of it was read, and the process's peak RSS stays
// near its start-up RSS. The margins are generous: the attack sends 40 times the allowed growth.
import fs from 'node:fs';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli, type CliChild } from '../../helpers/daemon-child.js';

const NS = 'https://os.grid.example/';
const ENV11 = 'http://schemas.xmlsoap.org/soap/envelope/';
const ATTACK_BYTES = 256 * 1024 * 1024;
/** Peak RSS growth allowed over the whole file: a fraction of one attack. */
const RSS_GROWTH_LIMIT = ATTACK_BYTES / 40;
/** What the sender may get rid of before the refusal: socket buffers and the bounded part. */
const SENT_LIMIT = 32 * 1024 * 1024;

let child: CliChild;
let url: string;
let baseRss: number;

const status = (key: 'VmRSS' | 'VmHWM'): number =>
  Number(new RegExp(`${key}:\\s+(\\d+)`).exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1]) * 1024;

beforeAll(async () => {
  child = startCli(['emulator', '--port', '0']);
  [, url] = (await child.waitFor(/listening on (http:\/\/[^\s]+)/)) as unknown as [string, string];
  expect((await fetch(`${url}/v2/auth/version`)).status).toBe(200);
  baseRss = status('VmRSS');
});
afterAll(async () => {
  child.kill('SIGTERM');
  await child.exited;
});

interface Outcome {
  /** Bytes handed to the socket before the answer (or the close) came. */
  readonly sent: number;
  readonly status?: number;
  readonly body?: string;
}

/**
 * Streams `head`, then `fill` repeated up to ATTACK_BYTES, then `tail`, as fast as the server
 * reads; stops as soon as it answers or closes the connection.
 */
function flood(path: string, headers: Record<string, string>, head: string, fill: string, tail: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const u = new URL(path, url);
    const req = http.request(u, { method: 'POST', headers: { ...headers, 'content-length': String(ATTACK_BYTES) } });
    const chunk = Buffer.from(fill.repeat(Math.ceil(65536 / fill.length)));
    let sent = 0;
    let done = false;
    const finish = (o: Omit<Outcome, 'sent'>): void => {
      if (done) return;
      done = true;
      resolve({ sent, ...o });
      req.destroy();
    };
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => finish({ status: res.statusCode ?? 0, body }));
      res.on('error', () => finish({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', () => finish({}));
    req.on('close', () => finish({}));
    const pump = (): void => {
      while (!done) {
        if (sent === 0) {
          sent += head.length;
          if (!req.write(head)) return void req.once('drain', pump);
          continue;
        }
        const left = ATTACK_BYTES - sent - tail.length;
        if (left <= 0) {
          sent += tail.length;
          req.end(tail);
          return;
        }
        const piece = left < chunk.length ? chunk.subarray(0, left) : chunk;
        sent += piece.length;
        if (!req.write(piece)) return void req.once('drain', pump);
      }
    };
    pump();
  });
}

const soapHeaders = (op: string): Record<string, string> => ({ 'content-type': 'text/xml; charset=utf-8', soapaction: `"${NS}${op}"` });
const envelope = (op: string, inner: string): [string, string] => [
  `<?xml version="1.0"?><s:Envelope xmlns:s="${ENV11}"><s:Body><q:${op} xmlns:q="${NS}">${inner}`,
  `</q:${op}></s:Body></s:Envelope>`,
];

describe('request bodies are bounded and the caller is checked before the body is read', () => {
  it('SOAP: an unauthenticated envelope of endless empty elements is refused after a small part', async () => {
    const [head, tail] = envelope('WhoAmI', '');
    const r = await flood('/v4.1/prod/GridOS.asmx', soapHeaders('WhoAmI'), head, '<a/>', tail);
    expect(r.sent).toBeLessThan(SENT_LIMIT);
    if (r.status !== undefined) expect([r.status, r.body]).toEqual([500, expect.stringContaining('elements')]);
  });

  it('SOAP: an upload with a forged session is refused at the SessionID, before its content is read', async () => {
    const [head, tail] = envelope(
      'ParcelUpload',
      '<q:SessionID>not-a-session</q:SessionID><q:FileName>big.edi</q:FileName><q:Bytes>1</q:Bytes><q:Content>',
    );
    const r = await flood('/v4.1/prod/GridOS.asmx', soapHeaders('ParcelUpload'), head, 'QUJD', `</q:Content>${tail}`);
    expect(r.sent).toBeLessThan(SENT_LIMIT);
    if (r.status !== undefined) expect([r.status, r.body]).toEqual([500, expect.stringContaining('<ErrorItem>SessionID</ErrorItem>')]);
  });

  it('SOAP: content before any SessionID is refused at its first characters', async () => {
    const [head, tail] = envelope('ParcelUpload', '<q:FileName>big.edi</q:FileName><q:Content>');
    const r = await flood('/v4.1/prod/GridOS.asmx', soapHeaders('ParcelUpload'), head, 'QUJD', `</q:Content>${tail}`);
    expect(r.sent).toBeLessThan(SENT_LIMIT);
    if (r.status !== undefined) expect([r.status, r.body]).toEqual([500, expect.stringContaining('<ErrorItem>SessionID</ErrorItem>')]);
  });

  it('SOAP and REST: a declared size past the limit is refused before any of it is read', async () => {
    const huge = await new Promise<number>((resolve) => {
      const req = http.request(new URL('/v2/users/list', url), {
        method: 'POST',
        headers: { 'x-api-key': 'demo-key-1001', 'content-type': 'application/json', 'content-length': String(ATTACK_BYTES) },
      });
      req.on('response', (res) => resolve(res.statusCode ?? 0));
      req.on('error', () => resolve(0));
      req.flushHeaders();
    });
    expect(huge).toBe(400);
  });

  it('REST: an upload without credentials is refused before its body is read', async () => {
    const r = await flood('/v2/parcels/upload', { 'content-type': 'application/json' }, '{"fileName":"big.edi","content":"', 'QUJD', '"}');
    expect(r.sent).toBeLessThan(SENT_LIMIT);
    if (r.status !== undefined) expect(r.status).toBe(401);
  });

  it('the emulator still answers, and its peak RSS stayed near its start-up RSS', async () => {
    const me = await fetch(`${url}/v2/users/me`, { headers: { 'x-api-key': 'demo-key-1001' } });
    expect(me.status).toBe(200);
    const growth = status('VmHWM') - baseRss;
    process.stdout.write(`emulator peak RSS growth under the floods: ${(growth / 1048576).toFixed(1)} MiB\n`);
    expect(growth).toBeLessThan(RSS_GROWTH_LIMIT);
  });
});
