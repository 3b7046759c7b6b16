// Callbacks (issue #3 item 6): registration, delivery on InBoxReady with Basic auth, retries with
// backoff recorded per attempt, the test endpoint, events and queue — to an https receiver on
// 127.0.0.1 with a self-signed certificate made for the test.
import { selfSignedCert } from '../../helpers/tls.mjs';
import { once } from 'node:events';
import fs from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '@gridsync/emulator';

let emu: Emulator;
let receiver: https.Server;
let hookUrl: string;
let dir: string;
const received: { url: string; auth: string | undefined; body: Record<string, unknown> }[] = [];
let answer = 200;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-cb-'));
  const tls = selfSignedCert(dir);
  if (!tls) throw new Error('openssl is needed for the https callback receiver');
  receiver = https.createServer(tls, (req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      received.push({ url: req.url ?? '', auth: req.headers.authorization, body: JSON.parse(body) as Record<string, unknown> });
      res.writeHead(answer).end('ok');
    });
  });
  receiver.listen(0, '127.0.0.1');
  await once(receiver, 'listening');
  hookUrl = `https://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  emu = await startEmulator({ settings: { callbackRetryDelaysMs: [20, 20] } });
});
afterAll(async () => {
  await emu.close();
  receiver.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function call(method: string, p: string, body?: unknown): Promise<{ status: number; data: unknown; message: string | null }> {
  const res = await fetch(emu.url + p, {
    method,
    headers: { 'x-api-key': 'demo-key-1001', 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const j = (await res.json()) as { data: unknown; message: string | null };
  return { status: res.status, data: j.data, message: j.message };
}

const until = async (cond: () => boolean | Promise<boolean>): Promise<void> => {
  for (let i = 0; i < 200 && !(await cond()); i++) await new Promise((r) => setTimeout(r, 10));
};

describe('emulator callbacks', () => {
  it('rejects a plain http callback URL', async () => {
    const r = await call('POST', '/v2/callbacks/create', { url: 'http://127.0.0.1/hook', event: 'Parcel' });
    expect(r.status).toBe(400);
    expect(r.message).toMatch(/^url/);
  });

  it('delivers a Parcel event with Basic auth when a parcel becomes InBoxReady, and records it', async () => {
    const cb = (
      await call('POST', '/v2/callbacks/create', {
        url: hookUrl,
        event: 'Parcel',
        mailboxId: 1001,
        httpAuthType: 'Basic',
        username: 'u',
        password: 'p',
      })
    ).data as { callbackId: number };
    const parcelId = await emu.inject({ mailboxId: 1001, fileName: 'hooked.x12', content: Buffer.from('x') });
    await until(() => received.length > 0);
    expect(received[0]).toMatchObject({
      url: '/hook',
      auth: `Basic ${Buffer.from('u:p').toString('base64')}`,
      body: { event: 'Parcel', parcelId, status: 'InBoxReady', fileName: 'hooked.x12', mailboxId: 1001 },
    });
    await until(
      async () =>
        ((await call('POST', '/v2/callbacks/event-list', {})).data as { events: { status: string }[] }).events[0]?.status === 'Completed',
    );
    const list = (await call('POST', '/v2/callbacks/event-list', { mailboxId: 1001 })).data as {
      totalRecords: number;
      events: { callbackEventId: number; httpStatus: number }[];
    };
    expect(list.totalRecords).toBe(1);
    expect(list.events[0]?.httpStatus).toBe(200);
    const detail = (await call('POST', '/v2/callbacks/get-event-by-id', { callbackEventId: list.events[0]?.callbackEventId })).data as {
      payload: string;
      attempts: number;
    };
    expect(JSON.parse(detail.payload)).toMatchObject({ parcelId });
    expect(detail.attempts).toBe(1);
    expect((await call('GET', `/v2/callbacks/get-queue-by-id?callbackId=${cb.callbackId}`)).data).toMatchObject({
      callbackId: cb.callbackId,
      status: 'Completed',
      lastHttpStatus: 200,
    });
    expect((await call('POST', '/v2/callbacks/event-list', { recordsPerPage: 501 })).status).toBe(400);
  });

  it('retries a failing receiver after the configured gaps and gives up with Error; the test endpoint reports the answer', async () => {
    received.length = 0;
    answer = 503;
    await emu.inject({ mailboxId: 1001, fileName: 'fails.x12', content: Buffer.from('y') });
    await until(() => received.length >= 3);
    await new Promise((r) => setTimeout(r, 50));
    expect(received.filter((r) => r.body.fileName === 'fails.x12')).toHaveLength(3);
    const events = ((await call('POST', '/v2/callbacks/event-list', {})).data as { events: { status: string; httpStatus: number }[] })
      .events;
    expect(events.at(-1)).toMatchObject({ status: 'Error', httpStatus: 503 });
    const cb = (await call('POST', '/v2/callbacks/queue-list', {})).data as { queueEntries: { callbackId: number }[] };
    const test = (await call('POST', '/v2/callbacks/test', { callbackId: cb.queueEntries[0]?.callbackId })).data as {
      httpStatus: number;
      responseBody: string;
    };
    expect(test).toMatchObject({ httpStatus: 503, responseBody: 'ok' });
    answer = 200;
    expect((await call('DELETE', '/v2/callbacks', { callbackId: cb.queueEntries[0]?.callbackId })).data).toBe(true);
    expect((await call('GET', `/v2/callbacks/get-queue-by-id?callbackId=${cb.queueEntries[0]?.callbackId}`)).status).toBe(404);
  });

  it('fault rules drop, duplicate and delay (reorder) deliveries under the name callbacks.deliver', async () => {
    answer = 200;
    const cb = (await call('POST', '/v2/callbacks/create', { url: `${hookUrl}-faults`, event: 'Parcel', mailboxId: 1001 })).data as {
      callbackId: number;
    };
    const mine = (): { body: Record<string, unknown> }[] => received.filter((r) => r.url === '/hook-faults');
    const events = async (): Promise<{ objectId: number; status: string }[]> =>
      (
        (await call('POST', '/v2/callbacks/event-list', { recordsPerPage: 500 })).data as {
          events: { callbackId: number; objectId: number; status: string }[];
        }
      ).events.filter((e) => e.callbackId === cb.callbackId);
    try {
      emu.setFaults({ seed: 7, rules: [{ endpoint: 'callbacks.deliver', dropRate: 1 }] });
      const dropped = await emu.inject({ mailboxId: 1001, fileName: 'dropped.x12', content: Buffer.from('d') });
      await until(async () => (await events()).some((e) => e.objectId === dropped && e.status === 'Completed'));
      expect(mine()).toEqual([]);

      emu.setFaults({ seed: 7, rules: [{ endpoint: 'callbacks.deliver', duplicateRate: 1 }] });
      const doubled = await emu.inject({ mailboxId: 1001, fileName: 'doubled.x12', content: Buffer.from('e') });
      await until(() => mine().length >= 2);
      expect(mine().map((r) => r.body.parcelId)).toEqual([doubled, doubled]);

      emu.setFaults({ seed: 7, rules: [{ endpoint: 'callbacks.deliver', latencyMs: [0, 400] }] });
      const sent: number[] = [];
      for (let i = 0; i < 10; i++) sent.push(await emu.inject({ mailboxId: 1001, fileName: `late-${i}.x12`, content: Buffer.from('f') }));
      await until(() => mine().length >= 12);
      const arrived = mine()
        .slice(2)
        .map((r) => r.body.parcelId as number);
      expect([...arrived].sort((a, b) => a - b)).toEqual(sent);
      expect(arrived).not.toEqual(sent);
      expect(emu.faultCounts()).toMatchObject({ drop: 1, duplicate: 1 });
    } finally {
      emu.setFaults({});
    }
  });
});
