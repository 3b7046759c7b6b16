// The emulator against the observable rules of the service (docs/wire.md), over real HTTP.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '@gridsync/emulator';
import { edifact, x12 } from '../../helpers/edi.js';
import { repoRoot } from '../../helpers/journal-child.js';

let emu: Emulator;
beforeEach(async () => {
  emu = await startEmulator({ settings: { acknowledgeDelayMs: 0 } });
});
afterEach(async () => emu.close());

interface Env {
  status: number;
  body: { success: boolean; data: unknown; errorCode: string | null; message: string | null };
  headers: Headers;
}

async function req(
  method: string,
  p: string,
  opts: { key?: string | null; bearer?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<Env> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  const key = opts.key === undefined ? 'demo-key-1001' : opts.key;
  if (key) headers['x-api-key'] = key;
  if (opts.bearer) headers.authorization = `Bearer ${opts.bearer}`;
  if (opts.body !== undefined || opts.rawBody !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(emu.url + p, {
    method,
    headers,
    body: opts.rawBody ?? (opts.body !== undefined ? JSON.stringify(opts.body) : undefined),
  });
  return { status: res.status, body: (await res.json()) as Env['body'], headers: res.headers };
}

const upload = (content: string, extra: Record<string, unknown> = {}, key = 'demo-key-1001') =>
  req('POST', '/v2/parcels/upload', { key, body: { fileName: 'f.x12', content: Buffer.from(content).toString('base64'), ...extra } });

describe('authentication (docs/wire.md#authentication)', () => {
  it('matches X-API-Key exactly: a wrong header name is 401, an unknown key is InvalidAPIKey', async () => {
    expect((await req('GET', '/v2/users/me', { key: null, headers: { 'x-api-token': 'demo-key-1001' } })).body.errorCode).toBe(
      'InvalidSession',
    );
    const bad = await req('GET', '/v2/users/me', { key: 'nope' });
    expect([bad.status, bad.body.errorCode]).toEqual([401, 'InvalidAPIKey']);
    const ok = await req('GET', '/v2/users/me');
    expect(ok.body.data).toMatchObject({ login: 'erp', mailboxId: 1001 });
  });

  it('login gives a bearer token with expiresAt and a refresh token; refresh kills the old token; logout kills the new one', async () => {
    const login = await req('POST', '/v2/auth/login', { key: null, body: { login: 'erp', password: 'Demo-pass1' } });
    const t = login.body.data as { token: string; expiresAt: string; refreshToken: string; userId: number };
    expect(Date.parse(t.expiresAt)).toBeGreaterThan(Date.now() + 50 * 60_000);
    expect((await req('POST', '/v2/auth/session', { key: null, bearer: t.token })).body.data).toMatchObject({
      userId: 11,
      mailboxId: 1001,
      authLevel: 'MailboxAdmin',
    });
    const refreshed = (await req('POST', '/v2/auth/refresh', { key: null, body: { refreshToken: t.refreshToken } })).body.data as {
      token: string;
    };
    expect((await req('GET', '/v2/users/me', { key: null, bearer: t.token })).status).toBe(401);
    expect((await req('GET', '/v2/users/me', { key: null, bearer: refreshed.token })).status).toBe(200);
    await req('POST', '/v2/auth/logout', { key: null, bearer: refreshed.token });
    expect((await req('GET', '/v2/users/me', { key: null, bearer: refreshed.token })).body.errorCode).toBe('InvalidSession');
    expect((await req('POST', '/v2/auth/login', { key: null, body: { email: 'erp@ourco.example', password: 'Demo-pass1' } })).status).toBe(
      200,
    );
    expect((await req('POST', '/v2/auth/login', { key: null, body: { login: 'erp', password: 'wrong' } })).status).toBe(401);
  });

  it('answers the version without credentials', async () => {
    expect((await req('GET', '/v2/auth/version', { key: null })).body.data).toEqual({ version: '2.6' });
  });

  it('AuthLevel: network-level operations need NetworkAdmin (403 AccessDenied); another user’s key too', async () => {
    const delims = { networkId: 1, elementDelimiter: '*', subElementDelimiter: '>', segmentTerminator: '~' };
    const denied = await req('POST', '/v2/networks/x12-delimiters', { body: delims });
    expect([denied.status, denied.body.errorCode]).toEqual([403, 'AccessDenied']);
    expect((await req('GET', '/v2/users/key/13')).status).toBe(403);
    expect((await req('GET', '/v2/users/key/11', { key: 'demo-key-admin' })).body.data).toBe('demo-key-1001');
    expect((await req('GET', '/v2/users/11/api-key')).body.data).toBe('demo-key-1001');
  });

  it('reports another tenant’s objects as not found', async () => {
    const id = await emu.inject({ mailboxId: 1001, fileName: 'mine.x12', content: Buffer.from('x') });
    const other = await req('GET', `/v2/parcels/${id}`, { key: 'demo-key-1002' });
    expect([other.status, other.body.errorCode]).toEqual([404, 'ObjectNotFound']);
    expect((await req('POST', '/v2/parcels/pending-inbox-list', { key: 'demo-key-1002', body: { mailboxId: 1001 } })).status).toBe(404);
  });
});

describe('errors and limits (docs/wire.md#errors and docs/wire.md#limits)', () => {
  it.each([
    ['POST', '/v2/parcels/inbox-list', { recordsPerPage: 0 }, 'recordsPerPage'],
    ['POST', '/v2/parcels/inbox-list', { recordsPerPage: 501 }, 'recordsPerPage'],
    ['POST', '/v2/parcels/inbox-list', { pageNo: 0 }, 'pageNo'],
    ['POST', '/v2/parcels/inbox-list', { pageNo: 'one' }, 'pageNo'],
    ['POST', '/v2/parcels/inbox-list', { status: 'Lost' }, 'status'],
    ['POST', '/v2/parcels/confirm', {}, 'parcelId'],
    ['POST', '/v2/parcels/confirm', { parcelId: -4 }, 'parcelId'],
    ['POST', '/v2/reports/traffic-stats', { targetTime: '2026-11-01T00:00:00Z', numPeriods: 0, period: 'Day' }, 'numPeriods'],
    ['POST', '/v2/networks/list', { recordsPerPage: 501 }, 'recordsPerPage'],
    ['POST', '/v2/parcels/find-mailbagcontrolid', { mailbagControlId: '' }, 'mailbagControlId'],
  ])('%s %s %j → 400 InvalidParameter naming %s, never a 500', async (method, p, body, field) => {
    const r = await req(method, p, { body });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ success: false, data: null, errorCode: 'InvalidParameter' });
    expect(r.body.message).toMatch(new RegExp(`^${field}`));
  });

  it('malformed JSON and a non-object body are 400 envelopes', async () => {
    for (const rawBody of ['{"mailboxId":', '[1,2]', 'null', '\u0000']) {
      const r = await req('POST', '/v2/parcels/inbox-list', { rawBody });
      expect(r.status).toBe(400);
      expect(r.body.errorCode).toBe('InvalidParameter');
    }
  });

  it('an unknown path is 404 ObjectNotFound', async () => {
    const nf = await req('GET', '/v2/no/such/thing');
    expect([nf.status, nf.body.errorCode]).toEqual([404, 'ObjectNotFound']);
  });

  it('rate limit: 429 RateLimitExceeded with Retry-After', async () => {
    await emu.close();
    emu = await startEmulator({ rateLimit: { perSecond: 1, burst: 2 } });
    const codes = [];
    for (let i = 0; i < 4; i++) codes.push((await req('GET', '/v2/users/me')).status);
    expect(codes.slice(0, 2)).toEqual([200, 200]);
    const limited = await req('GET', '/v2/users/me');
    expect([limited.status, limited.body.errorCode]).toEqual([429, 'RateLimitExceeded']);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });
});

describe('parcel lifecycle and routing (docs/wire.md#inbound-states)', () => {
  it('routes an upload by its ISA envelope into the receiver’s inbox; download, confirm, delivered', async () => {
    // From the demo partner to us (the partner's own inbox would acknowledge at once).
    const content = x12(77).replace('ZZ*GRIDSYNC       *ZZ*DEMOPARTNER    ', 'ZZ*DEMOPARTNER    *ZZ*GRIDSYNC       ');
    const up = await upload(content, { bytes: content.length }, 'demo-key-1002');
    const outId = up.body.data as number;
    const pending = await req('POST', '/v2/parcels/pending-inbox-list', { key: 'demo-key-1001', body: {} });
    const parcels = pending.body.data as { parcelId: number; fileName: string; status?: string }[];
    expect(parcels).toHaveLength(1);
    expect(parcels[0]).not.toHaveProperty('status');
    const inId = parcels[0]!.parcelId;
    const dl = await req('POST', '/v2/parcels/download', { key: 'demo-key-1001', body: { parcelId: inId } });
    const d = dl.body.data as { content: string; bytes: number; fileName: string };
    expect(Buffer.from(d.content, 'base64').toString()).toBe(content);
    expect(d).toMatchObject({ bytes: content.length, fileName: 'f.x12' });
    expect((await req('POST', '/v2/parcels/confirm', { key: 'demo-key-1001', body: { parcelId: inId } })).body.data).toBe(true);
    expect((await req('POST', '/v2/parcels/confirm', { key: 'demo-key-1001', body: { parcelId: inId } })).body.data).toBe(true);
    expect((await req('GET', `/v2/parcels/${inId}`, { key: 'demo-key-1001' })).body.data).toMatchObject({ status: 'InBoxTransferred' });
    expect((await req('GET', `/v2/parcels/${outId}`, { key: 'demo-key-1002' })).body.data).toMatchObject({ status: 'OutBoxDelivered' });
    expect((await req('POST', '/v2/parcels/pending-inbox-list', { key: 'demo-key-1001', body: {} })).body.data).toEqual([]);
    expect((await req('POST', '/v2/parcels/inbox-list', { key: 'demo-key-1001', body: {} })).body.data).toEqual([]);
    expect(
      (await req('POST', '/v2/parcels/inbox-list', { key: 'demo-key-1001', body: { status: 'InBoxTransferred' } })).body.data,
    ).toHaveLength(1);
    await req('POST', `/v2/parcels/${inId}/reset-to-inbox`, { key: 'demo-key-1001' });
    expect((await req('POST', '/v2/parcels/pending-inbox-list', { key: 'demo-key-1001', body: {} })).body.data).toHaveLength(1);
  });

  it('routes EDIFACT by UNB, and by explicit grid IDs; the demo partner answers with a 997 / CONTRL', async () => {
    await emu.close();
    emu = await startEmulator({ settings: { acknowledgeDelayMs: 0 } });
    expect((await upload(edifact(5), { fileName: 'o.edi' })).status).toBe(200);
    expect((await upload('no envelope at all', { gridIdFrom: 5001, gridIdTo: 5002 })).status).toBe(200);
    expect((await upload(x12(6))).status).toBe(200);
    await new Promise((r) => setTimeout(r, 50));
    const inbox = (await req('POST', '/v2/parcels/pending-inbox-list', { body: {} })).body.data as { parcelId: number; fileName: string }[];
    expect(inbox.map((p) => p.fileName).sort()).toEqual(['997_000000006.x12', 'CONTRL_5.edi']);
    const ack = (
      await req('POST', '/v2/parcels/download', { body: { parcelId: inbox.find((p) => p.fileName.startsWith('997'))!.parcelId } })
    ).body.data as { content: string };
    const text = Buffer.from(ack.content, 'base64').toString();
    expect(text.indexOf('~')).toBe(105);
    expect(text).toMatch(/ST\*997\*0001~AK1\*IN\*6~/);
  });

  it('refuses an unroutable upload and a wrong byte count, creating nothing', async () => {
    const noRoute = await upload(x12(8).replace('DEMOPARTNER    ', 'STRANGER       '));
    expect([noRoute.status, noRoute.body.errorCode]).toEqual([400, 'InvalidParameter']);
    expect(noRoute.body.message).toMatch(/cannot route/);
    expect((await upload(x12(9), { bytes: 3 })).body.message).toMatch(/bytes/);
    expect((await upload('x', { gridIdFrom: 5001, gridIdTo: 9999 })).status).toBe(400);
    expect((await req('POST', '/v2/parcels/upload', { body: { fileName: 'x', content: '@@@@' } })).body.message).toMatch(/content/);
    const all = await (await fetch(`${emu.url}/_emulator/parcels`)).json();
    expect((all as { data: unknown[] }).data).toEqual([]);
  });

  it('cancels an undelivered outbound parcel only; reset-to-inbox only for inbound', async () => {
    const out = (await upload('x', { gridIdFrom: 5001, gridIdTo: 5002 })).body.data as number;
    await new Promise((r) => setTimeout(r, 20));
    expect((await req('POST', `/v2/parcels/cancel/${out}`)).status).toBe(400);
    const inj = await emu.inject({ mailboxId: 1001, fileName: 'in', content: Buffer.from('y') });
    expect((await req('POST', `/v2/parcels/${inj}/cancel`)).status).toBe(400);
    expect((await req('POST', `/v2/parcels/${out}/reset-to-inbox`)).status).toBe(400);
  });

  it('legacy download mode hides a downloaded parcel from the pending list until redelivery', async () => {
    let now = Date.now();
    await emu.close();
    emu = await startEmulator({ now: () => now, settings: { legacyDownloadMode: true, redeliverAfterMs: 60_000 } });
    const id = await emu.inject({ mailboxId: 1001, fileName: 'l.x12', content: Buffer.from('legacy') });
    await req('POST', '/v2/parcels/download', { body: { parcelId: id } });
    expect((await req('POST', '/v2/parcels/pending-inbox-list', { body: {} })).body.data).toEqual([]);
    now += 61_000;
    expect((await req('POST', '/v2/parcels/pending-inbox-list', { body: {} })).body.data).toHaveLength(1);
  });
});

describe('state, faults, process', () => {
  it('keeps its state across a restart with a data file', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-emu-'));
    await emu.close();
    emu = await startEmulator({ dataFile: path.join(dir, 'e.sqlite') });
    const id = await emu.inject({ mailboxId: 1001, fileName: 'kept.x12', content: Buffer.from('kept') });
    await emu.close();
    emu = await startEmulator({ dataFile: path.join(dir, 'e.sqlite') });
    const dl = await req('POST', '/v2/parcels/download', { body: { parcelId: id } });
    expect(Buffer.from((dl.body.data as { content: string }).content, 'base64').toString()).toBe('kept');
    const next = await emu.inject({ mailboxId: 1001, fileName: 'n', content: Buffer.from('n') });
    expect(next).toBeGreaterThan(id);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('the demo partner answers after a restart what reached it before (its pick-up timer died with the process)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-emu-'));
    await emu.close();
    // The partner would answer in a minute: the process stops first.
    emu = await startEmulator({ dataFile: path.join(dir, 'e.sqlite'), settings: { acknowledgeDelayMs: 60_000 } });
    const content = Buffer.from(x12(4242)).toString('base64');
    const sent = await req('POST', '/v2/parcels/upload', { body: { fileName: 'invoice.x12', content, gridIdFrom: 5001, gridIdTo: 5002 } });
    expect(sent.status).toBe(200);
    await emu.close();
    emu = await startEmulator({ dataFile: path.join(dir, 'e.sqlite'), settings: { acknowledgeDelayMs: 0 } });
    let pending: { fileName: string }[] = [];
    for (let i = 0; i < 200 && pending.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 10));
      pending = (await req('POST', '/v2/parcels/pending-inbox-list', { body: {} })).body.data as { fileName: string }[];
    }
    expect(pending.map((p) => p.fileName)).toEqual([expect.stringMatching(/997/)]);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('injects the same faults for the same seed, and counts them', async () => {
    const run = async (): Promise<number[]> => {
      emu.setFaults({ seed: 42, rules: [{ endpoint: 'users.me', rate500: 0.3, rate503: 0.3 }] });
      const s = [];
      for (let i = 0; i < 30; i++) s.push((await req('GET', '/v2/users/me')).status);
      return s;
    };
    const a = await run();
    const b = await run();
    expect(a).toEqual(b);
    expect(new Set(a)).toEqual(new Set([200, 500, 503]));
    expect((emu.faultCounts()['500'] ?? 0) + (emu.faultCounts()['503'] ?? 0)).toBe(a.filter((s) => s !== 200).length * 2);
  });

  it('gridsync emulator --port 0 prints its URL, serves, and stops cleanly on SIGTERM', async () => {
    const child = spawn(process.execPath, [path.join(repoRoot, 'dist/cli/main.js'), 'emulator', '--port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /gridsync emulator listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
        if (m) resolve(m[1] as string);
      });
      child.on('exit', (code) => reject(new Error(`exited ${code}`)));
    });
    expect(((await (await fetch(`${url}/v2/auth/version`)).json()) as { data: unknown }).data).toEqual({ version: '2.6' });
    child.kill('SIGTERM');
    expect(await new Promise((r) => child.on('exit', (code) => r(code)))).toBe(0);
  });
});
