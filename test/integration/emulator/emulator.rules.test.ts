// Every numbered rule of the service's specification ("States and transitions", "Authentication",
// "Events", "Errors", "Limits"), one test each, named after the rule, against the emulator over
// real HTTP. Tenancy uses a fixture with two networks.
import { selfSignedCert } from '../../helpers/tls.mjs';
import { once } from 'node:events';
import fs from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, afterEach, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator, type SeedFixture } from '@gridsync/emulator';
import { prerequisite } from '../../helpers/require-tool.js';

const ROOT = 'rules-root-key-0123456789';
const seed: SeedFixture = {
  networks: [
    { networkId: 1, uniqueId: 'NETONE', companyName: 'Net One' },
    { networkId: 2, uniqueId: 'NETTWO', companyName: 'Net Two' },
  ],
  mailboxes: [
    { mailboxId: 1001, networkId: 1, uniqueId: 'ONEA', companyName: 'One A' },
    { mailboxId: 1002, networkId: 1, uniqueId: 'ONEB', companyName: 'One B' },
    { mailboxId: 2001, networkId: 2, uniqueId: 'TWOA', companyName: 'Two A' },
  ],
  gridIds: [
    { gridId: 5001, mailboxId: 1001, qualifier: 'ZZ', id: 'ONEA' },
    { gridId: 5002, mailboxId: 1002, qualifier: 'ZZ', id: 'ONEB' },
    { gridId: 5003, mailboxId: 2001, qualifier: 'ZZ', id: 'TWOA' },
  ],
  interconnects: [{ interconnectId: 7001, gridIdFrom: 5001, gridIdTo: 5002 }],
  users: [
    {
      userId: 11,
      login: 'user1',
      email: 'u1@one.example',
      password: 'Pass-word1',
      authLevel: 'MailboxAdmin',
      networkId: 1,
      mailboxId: 1001,
      apiKey: 'key-user1',
    },
    { userId: 12, login: 'plain1', password: 'Pass-word1', authLevel: 'MailboxUser', networkId: 1, mailboxId: 1001, apiKey: 'key-plain1' },
    {
      userId: 13,
      login: 'netadmin1',
      password: 'Pass-word1',
      authLevel: 'NetworkAdmin',
      networkId: 1,
      mailboxId: 1001,
      apiKey: 'key-netadmin1',
    },
    { userId: 21, login: 'user2', password: 'Pass-word1', authLevel: 'MailboxAdmin', networkId: 2, mailboxId: 2001, apiKey: 'key-user2' },
    {
      userId: 22,
      login: 'netadmin2',
      password: 'Pass-word1',
      authLevel: 'NetworkAdmin',
      networkId: 2,
      mailboxId: 2001,
      apiKey: 'key-netadmin2',
    },
    { userId: 1, login: 'root', password: 'Pass-word1', authLevel: 'Root', networkId: 1, mailboxId: 1001 },
  ],
};

let emu: Emulator;
beforeEach(async () => {
  emu = await startEmulator({ seed, rootKey: ROOT, settings: { acknowledgeDelayMs: 60_000, callbackRetryDelaysMs: [20, 20] } });
});
afterEach(async () => emu.close());

interface Res<T = unknown> {
  status: number;
  data: T;
  errorCode: string | null;
  message: string | null;
  headers: Headers;
}
async function call<T = unknown>(
  method: string,
  p: string,
  body?: unknown,
  headers: Record<string, string> = { 'x-api-key': 'key-user1' },
): Promise<Res<T>> {
  const res = await fetch(emu.url + p, {
    method,
    headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  const env = (await res.json()) as { data: T; errorCode: string | null; message: string | null };
  return { status: res.status, data: env.data, errorCode: env.errorCode, message: env.message, headers: res.headers };
}
const as = (key: string): Record<string, string> => ({ 'x-api-key': key });

describe('States and transitions', () => {
  it('rule 1: the pending-inbox list returns exactly the parcels in InBoxReady', async () => {
    const a = await emu.inject({ mailboxId: 1001, fileName: 'a', content: Buffer.from('a') });
    const b = await emu.inject({ mailboxId: 1001, fileName: 'b', content: Buffer.from('b') });
    await call('POST', '/v2/parcels/confirm', { parcelId: a });
    const pending = await call<{ parcelId: number; status?: string }[]>('POST', '/v2/parcels/pending-inbox-list', {});
    expect(pending.data.map((p) => p.parcelId)).toEqual([b]);
    expect(pending.data[0]).not.toHaveProperty('status');
    expect((await call<{ status: string }>('GET', `/v2/parcels/${b}`)).data.status).toBe('InBoxReady');
  });

  it('rule 2: a downloaded and confirmed parcel no longer appears in the default inbox list', async () => {
    const a = await emu.inject({ mailboxId: 1001, fileName: 'a', content: Buffer.from('a') });
    expect((await call<unknown[]>('POST', '/v2/parcels/inbox-list', {})).data).toHaveLength(1);
    await call('POST', '/v2/parcels/download', { parcelId: a });
    expect((await call<unknown[]>('POST', '/v2/parcels/inbox-list', {})).data).toHaveLength(1);
    await call('POST', '/v2/parcels/confirm', { parcelId: a });
    expect((await call<unknown[]>('POST', '/v2/parcels/inbox-list', {})).data).toEqual([]);
    expect((await call<unknown[]>('POST', '/v2/parcels/inbox-list', { status: 'InBoxTransferred' })).data).toHaveLength(1);
  });

  it('rule 3: a parcel found by mailbag control ID can be in InBoxTransferred', async () => {
    const a = await emu.inject({ mailboxId: 1001, fileName: 'a', content: Buffer.from('a') });
    await call('POST', '/v2/parcels/set-mailbagcontrolid', { parcelId: a, mailbagControlId: 'MB-1' });
    await call('POST', '/v2/parcels/confirm', { parcelId: a });
    const found = await call<{ parcelId: number; status: string }[]>('POST', '/v2/parcels/find-mailbagcontrolid', {
      mailbagControlId: 'MB-1',
    });
    expect(found.data).toMatchObject([{ parcelId: a, status: 'InBoxTransferred' }]);
  });

  it('rule 4: with showInactive false or omitted, the comm list excludes Suspended and Terminated channels', async () => {
    const ids: number[] = [];
    for (const [i, status] of ['Active', 'Suspended', 'Terminated', 'Development'].entries()) {
      const c = await call<{ commId: number }>('POST', '/v2/comms/create', { mailboxId: 1001, commType: 'ftp', identifier: `c${i}` });
      if (status !== 'Active') await call('PUT', '/v2/comms/update', { commId: c.data.commId, status });
      ids.push(c.data.commId);
    }
    const shown = async (body: unknown): Promise<number[]> =>
      (await call<{ commId: number }[]>('POST', '/v2/comms/list', body)).data.map((c) => c.commId);
    expect(await shown({})).toEqual([ids[0], ids[3]]);
    expect(await shown({ showInactive: false })).toEqual([ids[0], ids[3]]);
    expect(await shown({ showInactive: true })).toEqual(ids);
  });

  it('rule 5: a newly created grid ID is shown with status Active', async () => {
    const g = await call<{ gridId: number; status: string }>('POST', '/v2/ids', { mailboxId: 1001, qualifier: 'ZZ', id: 'NEWONE' });
    expect(g.data.status).toBe('Active');
    expect((await call<{ status: string }>('GET', `/v2/ids/${g.data.gridId}`)).data.status).toBe('Active');
    expect((await call<{ status: string }[]>('POST', '/v2/ids/find', { qualifier: 'ZZ', id: 'NEWONE' })).data[0]?.status).toBe('Active');
  });
});

describe('Authentication', () => {
  it('rule 1: login returns the expiry as expiresAt in UTC', async () => {
    const r = await call<{ token: string; expiresAt: string; userId: number }>(
      'POST',
      '/v2/auth/login',
      { login: 'user1', password: 'Pass-word1' },
      {},
    );
    expect(r.data.expiresAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
    expect(Date.parse(r.data.expiresAt)).toBeGreaterThan(Date.now());
    expect(r.data.userId).toBe(11);
  });

  it('rule 2: the header X-API-Key is matched as written; a wrong header name is 401', async () => {
    expect((await call('GET', '/v2/users/me', undefined, { 'x-api-key': 'key-user1' })).status).toBe(200);
    for (const name of ['x-api-token', 'api-key', 'x-apikey', 'x_api_key', 'authorization']) {
      expect((await call('GET', '/v2/users/me', undefined, { [name]: 'key-user1' })).status).toBe(401);
    }
  });

  it('rule 3: auth/session returns the context of the current session', async () => {
    const t = (await call<{ token: string }>('POST', '/v2/auth/login', { login: 'user1', password: 'Pass-word1' }, {})).data.token;
    const s = await call('POST', '/v2/auth/session', undefined, { authorization: `Bearer ${t}` });
    expect(s.data).toMatchObject({ userId: 11, login: 'user1', networkId: 1, mailboxId: 1001, authLevel: 'MailboxAdmin' });
  });

  it('rule 4: logout invalidates a bearer session', async () => {
    const t = (await call<{ token: string }>('POST', '/v2/auth/login', { login: 'user1', password: 'Pass-word1' }, {})).data.token;
    expect((await call('POST', '/v2/auth/logout', undefined, { authorization: `Bearer ${t}` })).status).toBe(200);
    const after = await call('GET', '/v2/users/me', undefined, { authorization: `Bearer ${t}` });
    expect([after.status, after.errorCode]).toEqual([401, 'InvalidSession']);
  });

  it('rule 5: an API key from users/key, keys/create or generate-api-key authenticates; a created key is shown in full once', async () => {
    expect((await call('GET', '/v2/users/key/11')).data).toBe('key-user1');
    const created = await call<{ key: string; keyId: number }>('POST', '/v2/keys/create', { userId: 11, visibility: 'Private' });
    expect((await call('GET', '/v2/users/me', undefined, as(created.data.key))).status).toBe(200);
    const later = JSON.stringify([
      (await call('POST', '/v2/keys/get-key', { userId: 11 })).data,
      (await call('POST', '/v2/keys/list', { userId: 11 })).data,
    ]);
    expect(later).not.toContain(created.data.key);
    const generated = await call<string>('POST', '/v2/users/11/generate-api-key');
    expect((await call('GET', '/v2/users/me', undefined, as(generated.data))).status).toBe(200);
    expect((await call('GET', '/v2/users/me', undefined, as('key-user1'))).errorCode).toBe('InvalidAPIKey');
  });

  it('rule 6: AuthLevel governs access — below NetworkAdmin network-level operations are 403 AccessDenied; Root reaches every network', async () => {
    const delims = { networkId: 1, elementDelimiter: '*', subElementDelimiter: '>', segmentTerminator: '~' };
    for (const key of ['key-user1', 'key-plain1']) {
      for (const [method, p, body] of [
        ['POST', '/v2/networks/x12-delimiters', delims],
        ['PUT', '/v2/networks', { networkId: 1, companyName: 'x' }],
        ['POST', '/v2/networks/update-config', { networkId: 1, a: 1 }],
        ['POST', '/v2/mailboxes/create', { networkId: 1, uniqueId: 'X', companyName: 'X' }],
        ['DELETE', '/v2/mailboxes/1002', undefined],
        ['POST', '/v2/users/role', { userId: 12, authLevel: 'MailboxUser' }],
        ['POST', '/v2/users/set-network-mailbox', { userId: 12, mailboxId: 1002 }],
        ['POST', '/v2/carboncopies/create', { fromMailboxId: 1001, toMailboxId: 1002, direction: 'InBox' }],
        ['POST', '/v2/ids/tp-move', { gridId: 5001, newMailboxId: 1002 }],
      ] as const) {
        const r = await call(method, p, body, as(key));
        expect([p, r.status, r.errorCode]).toEqual([p, 403, 'AccessDenied']);
      }
    }
    // A MailboxUser cannot create a comm or a grid ID either; a MailboxAdmin can.
    expect(
      (await call('POST', '/v2/comms/create', { mailboxId: 1001, commType: 'ftp', identifier: 'u' }, as('key-plain1'))).errorCode,
    ).toBe('AccessDenied');
    expect((await call('POST', '/v2/comms/create', { mailboxId: 1001, commType: 'ftp', identifier: 'u' }, as('key-user1'))).status).toBe(
      200,
    );
    expect((await call('POST', '/v2/networks/x12-delimiters', delims, as('key-netadmin1'))).status).toBe(200);
    expect((await call('POST', '/v2/networks/x12-delimiters', { ...delims, networkId: 2 }, as(ROOT))).status).toBe(200);
    expect((await call('GET', '/v2/mailboxes/2001', undefined, as(ROOT))).status).toBe(200);
  });

  it('rule 6 (tenancy): another tenant’s objects are 404 ObjectNotFound, never listed', async () => {
    const parcel = await emu.inject({ mailboxId: 2001, fileName: 'theirs', content: Buffer.from('t') });
    const c = await call<{ commId: number }>(
      'POST',
      '/v2/comms/create',
      { mailboxId: 2001, commType: 'ftp', identifier: 'two' },
      as('key-user2'),
    );
    for (const [method, p, body] of [
      ['GET', '/v2/networks/2', undefined],
      ['GET', '/v2/mailboxes/2001', undefined],
      ['GET', '/v2/ids/5003', undefined],
      ['GET', '/v2/users/21', undefined],
      ['GET', `/v2/parcels/${parcel}`, undefined],
      ['GET', `/v2/comms/${c.data.commId}`, undefined],
      ['POST', '/v2/networks/get-contact', { networkId: 2, contactType: 'Owner' }],
      ['POST', '/v2/networks/x12-delimiters', { networkId: 2, elementDelimiter: '*', subElementDelimiter: '>', segmentTerminator: '~' }],
      ['POST', '/v2/users/role', { userId: 21, authLevel: 'MailboxUser' }],
      ['POST', '/v2/keys/create', { userId: 21, visibility: 'Private' }],
      ['POST', '/v2/portals/create', { mailboxId: 2001 }],
      ['POST', '/v2/carboncopies/create', { fromMailboxId: 1001, toMailboxId: 2001, direction: 'InBox' }],
      ['POST', '/v2/parcels/pending-inbox-list', { mailboxId: 2001 }],
    ] as const) {
      const r = await call(method, p, body, as('key-netadmin1'));
      expect([p, r.status, r.errorCode]).toEqual([p, 404, 'ObjectNotFound']);
    }
    expect(
      (await call<{ networkId: number }[]>('POST', '/v2/users/list', {}, as('key-netadmin1'))).data.every((u) => u.networkId === 1),
    ).toBe(true);
    expect((await call<unknown[]>('POST', '/v2/comms/list', { showInactive: true }, as('key-netadmin1'))).data).toEqual([]);
    expect(
      (await call<{ networks: { networkId: number }[] }>('POST', '/v2/networks/list', {}, as('key-netadmin1'))).data.networks.map(
        (n) => n.networkId,
      ),
    ).toEqual([1]);
    // Root sees both; the mailboxId filter gives the network owning that mailbox.
    expect(
      (await call<{ networks: { networkId: number }[] }>('POST', '/v2/networks/list', {}, as(ROOT))).data.networks.map((n) => n.networkId),
    ).toEqual([1, 2]);
    expect(
      (await call<{ networks: { networkId: number }[] }>('POST', '/v2/networks/list', { mailboxId: 2001 }, as(ROOT))).data.networks.map(
        (n) => n.networkId,
      ),
    ).toEqual([2]);
    expect(
      (await call<{ networks: unknown[] }>('POST', '/v2/networks/list', { mailboxId: 2001 }, as('key-netadmin1'))).data.networks,
    ).toEqual([]);
  });

  it('rule 7: every endpoint that sets a password enforces lower, upper, digit and non-alphanumeric, with no maximum length', async () => {
    const weak = ['lower-case1', 'UPPER-CASE1', 'NoDigits-here', 'NoSpecial123', 'Aa1!'.slice(0, 3)];
    const long = `Aa1!${'z'.repeat(10_000)}`;
    const setters: ((pw: string) => Promise<Res>)[] = [
      (pw) => call('POST', '/v2/users', { login: `n${Math.random()}`, password: pw, email: 'n@one.example' }),
      (pw) => call('POST', '/v2/users/password', { userId: 12, newPassword: pw }, as('key-netadmin1')),
      (pw) => call('PUT', '/v2/auth/password', { currentPassword: 'Pass-word1', newPassword: pw }, as('key-plain1')),
    ];
    for (const set of setters) {
      for (const pw of weak) {
        const r = await set(pw);
        expect([r.status, r.errorCode]).toEqual([400, 'InvalidParameter']);
        expect(r.message).toMatch(/password.*lowercase/i);
      }
    }
    expect((await setters[0]!(long)).status).toBe(200);
    expect((await setters[1]!(long)).status).toBe(200);
    expect((await call('POST', '/v2/auth/login', { login: 'plain1', password: long }, {})).status).toBe(200);
    expect((await call('PUT', '/v2/auth/password', { currentPassword: long, newPassword: `${long}B` }, as('key-plain1'))).status).toBe(200);
    // Generated passwords meet the rule.
    for (let i = 0; i < 20; i++) {
      const g = (await call<string>('POST', '/v2/users/generate-password', { length: 4 })).data;
      expect(/[a-z]/.test(g) && /[A-Z]/.test(g) && /\d/.test(g) && /[^A-Za-z0-9]/.test(g)).toBe(true);
    }
  });
});

describe('Events', () => {
  let receiver: https.Server | undefined;
  let hookUrl = '';
  let dir = '';
  const received: Record<string, unknown>[] = [];
  let answer = 200;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-rules-cb-'));
    const tls = selfSignedCert(dir);
    if (!prerequisite('openssl', tls !== undefined, 'the Events rules (https receivers) are not checked') || !tls) return;
    receiver = https.createServer(tls, (req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        received.push(JSON.parse(body) as Record<string, unknown>);
        res.writeHead(answer).end(`answer ${answer}`);
      });
    });
    receiver.listen(0, '127.0.0.1');
    await once(receiver, 'listening');
    hookUrl = `https://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  });
  afterAll(() => {
    receiver?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const until = async (cond: () => boolean | Promise<boolean>): Promise<void> => {
    for (let i = 0; i < 300 && !(await cond()); i++) await new Promise((r) => setTimeout(r, 10));
  };

  it('rule 1: callbacks/test POSTs to the registered address and reports its status, body and testedAt', async (t) => {
    if (!receiver) return t.skip();
    const cb = await call<{ callbackId: number }>('POST', '/v2/callbacks/create', { url: hookUrl, event: 'Parcel', mailboxId: 1001 });
    answer = 202;
    const r = await call<Record<string, unknown>>('POST', '/v2/callbacks/test', { callbackId: cb.data.callbackId });
    answer = 200;
    expect(r.data).toEqual({
      callbackId: cb.data.callbackId,
      url: hookUrl,
      httpStatus: 202,
      responseBody: 'answer 202',
      testedAt: expect.stringMatching(/Z$/) as string,
    });
    expect(received.at(-1)).toMatchObject({ callbackId: cb.data.callbackId, isTest: true });
  });

  it('rule 2: event-list filters by mailbox, event kind and dates, in pages of at most 500 (default 100)', async (t) => {
    if (!receiver) return t.skip();
    await call('POST', '/v2/callbacks/create', { url: hookUrl, event: 'Parcel', mailboxId: 1001 });
    await call('POST', '/v2/callbacks/create', { url: hookUrl, event: 'Parcel', mailboxId: 1002 }, as('key-netadmin1'));
    const before = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 5));
    for (let i = 0; i < 3; i++) await emu.inject({ mailboxId: 1001, fileName: `e${i}`, content: Buffer.from('e') });
    await emu.inject({ mailboxId: 1002, fileName: 'other', content: Buffer.from('o') });
    const list = async (
      body: unknown,
      key = 'key-netadmin1',
    ): Promise<{ totalRecords: number; pageNo: number; recordsPerPage: number; events: { mailboxId: number }[] }> =>
      (
        await call<{ totalRecords: number; pageNo: number; recordsPerPage: number; events: { mailboxId: number }[] }>(
          'POST',
          '/v2/callbacks/event-list',
          body,
          as(key),
        )
      ).data;
    const all = await list({});
    expect([all.totalRecords, all.pageNo, all.recordsPerPage]).toEqual([4, 1, 100]);
    expect((await list({ mailboxId: 1001 })).totalRecords).toBe(3);
    expect((await list({ event: 'Parcel', beginDate: before })).totalRecords).toBe(4);
    expect((await list({ endDate: before })).totalRecords).toBe(0);
    const page = await list({ pageNo: 2, recordsPerPage: 3 });
    expect([page.totalRecords, page.events.length]).toEqual([4, 1]);
    expect((await list({}, 'key-user1')).events.every((e) => e.mailboxId === 1001)).toBe(true);
    expect((await call('POST', '/v2/callbacks/event-list', { recordsPerPage: 501 })).errorCode).toBe('InvalidParameter');
    expect((await call('POST', '/v2/callbacks/event-list', { recordsPerPage: 500 })).status).toBe(200);
    expect((await call('POST', '/v2/callbacks/event-list', { pageNo: 0 })).errorCode).toBe('InvalidParameter');
    expect((await call('POST', '/v2/callbacks/event-list', { event: 'Nothing' })).errorCode).toBe('InvalidParameter');
  });

  it('rule 3: each event carries callback, kind, mailbox, object id, status, created, delivered and the delivery’s HTTP status — on InBoxReady and on confirm', async (t) => {
    if (!receiver) return t.skip();
    received.length = 0;
    const cb = await call<{ callbackId: number }>('POST', '/v2/callbacks/create', { url: hookUrl, event: 'Parcel', mailboxId: 1001 });
    const updated = await call<{ url: string }>('POST', '/v2/callbacks/update', { callbackId: cb.data.callbackId, url: `${hookUrl}?v=2` });
    expect(updated.data.url).toBe(`${hookUrl}?v=2`);
    const parcel = await emu.inject({ mailboxId: 1001, fileName: 'ev', content: Buffer.from('ev') });
    await call('POST', '/v2/parcels/confirm', { parcelId: parcel });
    type Ev = {
      callbackEventId: number;
      callbackId: number;
      event: string;
      mailboxId: number;
      objectId: number;
      status: string;
      created: string;
      delivered: string | null;
      httpStatus: number | null;
    };
    let events: Ev[] = [];
    await until(async () => {
      events = (await call<{ events: Ev[] }>('POST', '/v2/callbacks/event-list', { mailboxId: 1001 })).data.events;
      return events.length === 2 && events.every((e) => e.status === 'Completed');
    });
    expect(events).toHaveLength(2);
    for (const e of events) {
      expect(Object.keys(e).sort()).toEqual([
        'callbackEventId',
        'callbackId',
        'created',
        'delivered',
        'event',
        'httpStatus',
        'mailboxId',
        'objectId',
        'status',
      ]);
      expect(e).toMatchObject({
        callbackId: cb.data.callbackId,
        event: 'Parcel',
        mailboxId: 1001,
        objectId: parcel,
        status: 'Completed',
        httpStatus: 200,
      });
      expect(e.delivered).toMatch(/Z$/);
    }
    const payloads = received.filter((r) => r.parcelId === parcel).map((r) => r.status);
    expect(payloads).toEqual(['InBoxReady', 'InBoxTransferred']);
    // Deleted: no more deliveries, no longer in the queue.
    expect((await call('DELETE', '/v2/callbacks', { callbackId: cb.data.callbackId })).data).toBe(true);
    expect((await call<{ queueEntries: unknown[] }>('POST', '/v2/callbacks/queue-list', {})).data.queueEntries).toEqual([]);
  });
});

describe('Errors', () => {
  it('each errorCode comes with its HTTP status, success false, data null and a message', async () => {
    const cases: [Promise<Res>, number, string][] = [
      [call('GET', '/v2/users/me', undefined, {}), 401, 'InvalidSession'],
      [call('GET', '/v2/users/me', undefined, { authorization: 'Bearer forged' }), 401, 'InvalidSession'],
      [call('GET', '/v2/users/me', undefined, as('nope')), 401, 'InvalidAPIKey'],
      [call('POST', '/v2/parcels/confirm', '{"parcelId":'), 400, 'InvalidParameter'],
      [
        call('POST', '/v2/networks/x12-delimiters', {
          networkId: 1,
          elementDelimiter: '*',
          subElementDelimiter: '>',
          segmentTerminator: '~',
        }),
        403,
        'AccessDenied',
      ],
      [call('GET', '/v2/parcels/424242'), 404, 'ObjectNotFound'],
      [call('GET', '/v2/no/such/path'), 404, 'ObjectNotFound'],
      [call('POST', '/v2/ids', { mailboxId: 1001, qualifier: 'ZZ', id: 'ONEA' }), 400, 'DuplicateObject'],
    ];
    for (const [p, status, code] of cases) {
      const r = await p;
      expect([r.status, r.errorCode, r.data, typeof r.message]).toEqual([status, code, null, 'string']);
    }
  });

  it('429 RateLimitExceeded carries Retry-After; 500 and 503 come only from injected faults', async () => {
    await emu.close();
    emu = await startEmulator({ seed, rootKey: ROOT, rateLimit: { perSecond: 1, burst: 1 } });
    await call('GET', '/v2/users/me');
    const limited = await call('GET', '/v2/users/me');
    expect([limited.status, limited.errorCode]).toEqual([429, 'RateLimitExceeded']);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    emu.setFaults({ seed: 1, rules: [{ endpoint: 'users.me', rate500: 1 }] });
    await new Promise((r) => setTimeout(r, 1100));
    const injected = await call('GET', '/v2/users/me');
    expect([injected.status, injected.errorCode]).toEqual([500, 'InternalError']);
  });
});

describe('Limits', () => {
  it('recordsPerPage: networks 1–500 (default 25), users/grid IDs/partners/inbox default 25; pageNo at least 1', async () => {
    const nets = await call<{ recordsPerPage: number; pageNo: number }>('POST', '/v2/networks/list', {}, as(ROOT));
    expect([nets.data.recordsPerPage, nets.data.pageNo]).toEqual([25, 1]);
    for (const n of [0, 501]) expect((await call('POST', '/v2/networks/list', { recordsPerPage: n })).errorCode).toBe('InvalidParameter');
    expect((await call('POST', '/v2/networks/list', { recordsPerPage: 500 })).status).toBe(200);
    for (let i = 0; i < 30; i++) await call('POST', '/v2/users', { login: `bulk${i}`, password: 'Bulk-pass1', email: `b${i}@one.example` });
    expect((await call<unknown[]>('POST', '/v2/users/list', {})).data).toHaveLength(25);
    expect((await call<unknown[]>('POST', '/v2/users/list', { pageNo: 2 })).data.length).toBeGreaterThan(0);
    expect((await call<unknown[]>('POST', '/v2/users/list', { status: 'Suspended' })).data).toEqual([]);
    for (let i = 0; i < 30; i++) await emu.inject({ mailboxId: 1001, fileName: `p${i}`, content: Buffer.from('p') });
    expect((await call<unknown[]>('POST', '/v2/parcels/inbox-list', {})).data).toHaveLength(25);
    for (const p of ['/v2/users/list', '/v2/ids/list', '/v2/parcels/inbox-list', '/v2/parcels/outbox-list', '/v2/carboncopies/list']) {
      expect((await call('POST', p, { pageNo: 0 })).errorCode).toBe('InvalidParameter');
    }
    expect((await call('POST', '/v2/partners/list', { gridId: 5001, pageNo: 0 })).errorCode).toBe('InvalidParameter');
    // A page far beyond the end is empty, not an error.
    expect((await call('POST', '/v2/users/list', { pageNo: 9_007_199_254_740_991 })).data).toEqual([]);
  });

  it('numPeriods a positive integer; delimiters one character each; month counts only year and month', async () => {
    for (const n of [0, -1, 1.5])
      expect(
        (await call('POST', '/v2/reports/traffic-stats', { targetTime: '2026-01-01T00:00:00Z', numPeriods: n, period: 'Day' })).errorCode,
      ).toBe('InvalidParameter');
    for (const d of ['', '**']) {
      expect(
        (
          await call('POST', '/v2/mailboxes/x12-delimiters', {
            mailboxId: 1001,
            elementDelimiter: d,
            subElementDelimiter: '>',
            segmentTerminator: '~',
          })
        ).errorCode,
      ).toBe('InvalidParameter');
    }
    const a = await call('POST', '/v2/reports/monthly', { report: 1, month: '2026-02-01T00:00:00Z' });
    const b = await call('POST', '/v2/reports/monthly', { report: 1, month: '2026-02-27T13:45:00Z' });
    expect(a.data).toEqual(b.data);
    expect((a.data as unknown[]).length).toBe(4);
  });
});
