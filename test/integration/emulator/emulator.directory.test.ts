// The directory side of the emulator over real HTTP: the nine endpoints the service shapes field by
// field, and writes that change what reads return (comms, carbon copies, API keys, users, grid
// IDs, mailboxes, networks, partners, portals), with state kept across a restart.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ALL_ENDPOINTS, matchEndpoint } from '@gridsync/protocol/catalog';
import { ParcelStatus } from '@gridsync/protocol/wire';
import { startEmulator, type Emulator } from '@gridsync/emulator';
import { x12 } from '../../helpers/edi.js';

let emu: Emulator;
let dir: string;
beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-emu-dir-'));
  emu = await startEmulator({ dataFile: path.join(dir, 'emu.sqlite'), settings: { acknowledgeDelayMs: 60_000 } });
});
afterEach(async () => {
  await emu.close();
  fs.rmSync(dir, { recursive: true, force: true });
});
afterAll(() => {
  process.stdout.write(`answers checked against the response schema: ${checked.size} of ${ALL_ENDPOINTS.length} endpoints\n`);
});

interface Env<T = unknown> {
  status: number;
  success: boolean;
  data: T;
  errorCode: string | null;
  message: string | null;
}

async function call<T = unknown>(method: string, p: string, body?: unknown, key = 'demo-key-admin'): Promise<Env<T>> {
  const res = await fetch(emu.url + p, {
    method,
    headers: { 'x-api-key': key, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const env = (await res.json()) as Omit<Env<T>, 'status'>;
  return { status: res.status, ...env };
}
const checked = new Set<string>();
/** A 200 whose data the client's response schema of that endpoint accepts (the client must read what the emulator says). */
const ok = async <T = unknown>(method: string, p: string, body?: unknown, key?: string): Promise<T> => {
  const r = await call<T>(method, p, body, key);
  if (r.status !== 200) throw new Error(`${method} ${p} → ${r.status} ${r.errorCode ?? ''} ${r.message ?? ''}`);
  const e = matchEndpoint(method, p)?.endpoint;
  if (!e) throw new Error(`${method} ${p}: not a catalog endpoint`);
  const parsed = e.response.safeParse(r.data);
  if (!parsed.success)
    throw new Error(`${e.name}: the answer does not match the response schema: ${JSON.stringify(parsed.error.issues[0])}`);
  checked.add(e.name);
  return r.data;
};

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

describe('the endpoints the service shapes field by field', () => {
  it('networks/get-contact returns exactly networkId, contactType, name, email, phone; update-config changes it', async () => {
    const c = await ok('POST', '/v2/networks/get-contact', { networkId: 1, contactType: 'Owner' });
    expect(c).toEqual({ networkId: 1, contactType: 'Owner', name: 'Dana Owner', email: 'owner@net.example', phone: '+1 555 0100' });
    expect((await call('POST', '/v2/networks/get-contact', { networkId: 1, contactType: 'Accounting' })).errorCode).toBe('ObjectNotFound');
    await ok('POST', '/v2/networks/update-config', {
      networkId: 1,
      contacts: [{ contactType: 'Accounting', name: 'Acc', email: 'acc@net.example' }],
    });
    expect(await ok('POST', '/v2/networks/get-contact', { networkId: 1, contactType: 'Accounting' })).toEqual({
      networkId: 1,
      contactType: 'Accounting',
      name: 'Acc',
      email: 'acc@net.example',
      phone: null,
    });
    expect((await call('POST', '/v2/networks/get-contact', { networkId: 1, contactType: 'Janitor' })).errorCode).toBe('InvalidParameter');
  });

  it('status-lists: every parcel status of the wire vocabulary, each with a description', async () => {
    const lists = await ok<{ parcelStatuses: { code: string; description: string }[] }>('GET', '/v2/status-lists');
    expect(lists.parcelStatuses.map((s) => s.code)).toEqual(ParcelStatus.options);
    for (const s of lists.parcelStatuses) expect(s.description).not.toBe('');
  });

  it('networks/x12-delimiters: data null, a message; one character each (Limits); NetworkAdmin only (Authentication 6)', async () => {
    const r = await call('POST', '/v2/networks/x12-delimiters', {
      networkId: 1,
      elementDelimiter: '|',
      subElementDelimiter: '^',
      segmentTerminator: '~',
    });
    expect([r.status, r.success, r.data, typeof r.message]).toEqual([200, true, null, 'string']);
    expect((await ok<{ x12Delimiters: unknown }>('GET', '/v2/networks/1')).x12Delimiters).toEqual({
      elementDelimiter: '|',
      subElementDelimiter: '^',
      segmentTerminator: '~',
    });
    const two = await call('POST', '/v2/networks/x12-delimiters', {
      networkId: 1,
      elementDelimiter: '**',
      subElementDelimiter: '^',
      segmentTerminator: '~',
    });
    expect([two.status, two.errorCode, two.message]).toEqual([400, 'InvalidParameter', expect.stringMatching(/^elementDelimiter/)]);
    const denied = await call(
      'POST',
      '/v2/networks/x12-delimiters',
      { networkId: 1, elementDelimiter: '|', subElementDelimiter: '^', segmentTerminator: '~' },
      'demo-key-1001',
    );
    expect([denied.status, denied.errorCode]).toEqual([403, 'AccessDenied']);
  });

  it('comms/list: CommIDInfo records; showInactive false or omitted hides Suspended and Terminated (States rule 4); filters', async () => {
    const as2 = await ok<{ commId: number }>('POST', '/v2/comms/create', {
      mailboxId: 1001,
      commType: 'as2',
      identifier: 'OURCO-AS2',
      useType: 'Production',
    });
    const sftp = await ok<{ commId: number }>('POST', '/v2/comms/create', { mailboxId: 1001, commType: 'sftp', identifier: 'ourco' });
    const listed = await ok<Record<string, unknown>[]>('POST', '/v2/comms/list', {});
    expect(listed).toEqual([
      {
        commId: as2.commId,
        mailboxId: 1001,
        commType: 'as2',
        identifier: 'OURCO-AS2',
        status: 'Active',
        useType: 'Production',
        privateKeyRequired: true,
        withCerts: false,
      },
      {
        commId: sftp.commId,
        mailboxId: 1001,
        commType: 'sftp',
        identifier: 'ourco',
        status: 'Active',
        useType: 'TestAndProduction',
        privateKeyRequired: false,
        withCerts: false,
      },
    ]);
    await ok('PUT', '/v2/comms/update', { commId: sftp.commId, status: 'Suspended' });
    expect((await ok<{ commId: number }[]>('POST', '/v2/comms/list', {})).map((c) => c.commId)).toEqual([as2.commId]);
    expect((await ok<{ commId: number }[]>('POST', '/v2/comms/list', { showInactive: false })).map((c) => c.commId)).toEqual([as2.commId]);
    expect((await ok<{ commId: number }[]>('POST', '/v2/comms/list', { showInactive: true })).map((c) => c.commId)).toEqual([
      as2.commId,
      sftp.commId,
    ]);
    expect((await ok<unknown[]>('POST', '/v2/comms/list', { showInactive: true, commType: 'sftp' })).length).toBe(1);
    expect((await ok<unknown[]>('POST', '/v2/comms/list', { privateKeyRequired: true })).length).toBe(1);
    expect(await ok('POST', '/v2/comms/list', { withCerts: true })).toEqual([]);
    await ok('POST', '/v2/certificates/add-public', { commId: as2.commId, certType: 'X509', cert: Buffer.from('CERT').toString('base64') });
    expect(await ok<{ commId: number; withCerts: boolean }[]>('POST', '/v2/comms/list', { withCerts: true })).toMatchObject([
      { commId: as2.commId, withCerts: true },
    ]);
    expect(await ok('POST', '/v2/comms/list', { useType: 'Test' })).toEqual([]);
    // Another tenant sees none of them.
    expect(await ok('POST', '/v2/comms/list', { showInactive: true }, 'demo-key-1002')).toEqual([]);
  });

  it('comms/find: the comms with that identifier, optionally of one type', async () => {
    await ok('POST', '/v2/comms/create', { mailboxId: 1001, commType: 'as2', identifier: 'SHARED' });
    await ok('POST', '/v2/comms/create', { mailboxId: 1001, commType: 'ftp', identifier: 'SHARED' });
    expect((await ok<{ commType: string }[]>('POST', '/v2/comms/find', { identifier: 'SHARED' })).map((c) => c.commType)).toEqual([
      'as2',
      'ftp',
    ]);
    expect(
      (await ok<{ commType: string }[]>('POST', '/v2/comms/find', { identifier: 'SHARED', commType: 'ftp' })).map((c) => c.commType),
    ).toEqual(['ftp']);
    expect(await ok('POST', '/v2/comms/find', { identifier: 'nobody' })).toEqual([]);
    const dup = await call('POST', '/v2/comms/create', { mailboxId: 1001, commType: 'as2', identifier: 'SHARED' });
    expect([dup.status, dup.errorCode]).toEqual([400, 'DuplicateObject']);
    expect((await call('POST', '/v2/comms/find', {})).errorCode).toBe('InvalidParameter');
  });

  it('users/role: the updated UserIDInfo; scoped by networkId/mailboxId; nobody grants above their own level', async () => {
    const u = await ok<{ userId: number }>('POST', '/v2/users', {
      login: 'clerk',
      password: 'Clerk-pass1',
      email: 'clerk@ourco.example',
      mailboxId: 1001,
    });
    const r = await ok<Record<string, unknown>>('POST', '/v2/users/role', { userId: u.userId, authLevel: 'MailboxAdmin', mailboxId: 1002 });
    expect(Object.keys(r).sort()).toEqual([
      'authLevel',
      'created',
      'email',
      'firstName',
      'lastName',
      'login',
      'mailboxId',
      'networkId',
      'status',
      'userId',
    ]);
    expect(r).toMatchObject({ userId: u.userId, authLevel: 'MailboxAdmin', mailboxId: 1002, networkId: 1, status: 'Active' });
    expect(r.created).toMatch(ISO);
    expect((await call('POST', '/v2/users/role', { userId: u.userId, authLevel: 'Root' })).errorCode).toBe('AccessDenied');
    expect((await call('POST', '/v2/users/role', { userId: 99_999, authLevel: 'MailboxUser' })).errorCode).toBe('ObjectNotFound');
    expect((await call('POST', '/v2/users/role', { userId: u.userId, authLevel: 'MailboxUser' }, 'demo-key-1001')).errorCode).toBe(
      'AccessDenied',
    );
    // The alias form.
    expect(await ok('POST', `/v2/users/${u.userId}/set-role`, { authLevel: 'MailboxUser' })).toMatchObject({ authLevel: 'MailboxUser' });
  });

  it('users/set-network-mailbox: the updated UserIDInfo; a mailbox of another network is refused', async () => {
    const u = await ok<{ userId: number }>('POST', '/v2/users', { login: 'mover', password: 'Move-pass1', email: 'm@ourco.example' });
    expect(await ok('POST', '/v2/users/set-network-mailbox', { userId: u.userId, mailboxId: 1002 })).toMatchObject({
      userId: u.userId,
      mailboxId: 1002,
      networkId: 1,
    });
    expect(await ok('GET', `/v2/users/${u.userId}`)).toMatchObject({ mailboxId: 1002 });
    expect((await call('POST', '/v2/users/set-network-mailbox', { userId: u.userId })).errorCode).toBe('InvalidParameter');
    expect((await call('POST', '/v2/users/set-network-mailbox', { userId: u.userId, networkId: 2, mailboxId: 1001 })).errorCode).toBe(
      'InvalidParameter',
    );
    expect((await call('POST', '/v2/users/set-network-mailbox', { userId: u.userId, mailboxId: 424_242 })).errorCode).toBe(
      'ObjectNotFound',
    );
  });

  it('keys/create: the key record with the full key once; it authenticates; later views mask it; deleted → 401 (Authentication 5)', async () => {
    const k = await ok<Record<string, unknown>>('POST', '/v2/keys/create', { userId: 11, visibility: 'Private' }, 'demo-key-1001');
    expect(Object.keys(k).sort()).toEqual(['created', 'key', 'keyId', 'userId', 'visibility']);
    expect(k).toMatchObject({ userId: 11, visibility: 'Private' });
    const key = k.key as string;
    expect(key.length).toBeGreaterThanOrEqual(32);
    expect(await ok('GET', '/v2/users/me', undefined, key)).toMatchObject({ userId: 11 });
    const again = await ok<{ key: string }>('POST', '/v2/keys/get-key', { userId: 11 }, 'demo-key-1001');
    expect(again.key).not.toBe(key);
    expect(again.key.endsWith(key.slice(-4))).toBe(true);
    expect(JSON.stringify(await ok('POST', '/v2/keys/list', { userId: 11 }, 'demo-key-1001'))).not.toContain(key);
    expect(await ok('DELETE', '/v2/keys', { keyId: k.keyId }, 'demo-key-1001')).toBe(true);
    const gone = await call('GET', '/v2/users/me', undefined, key);
    expect([gone.status, gone.errorCode]).toEqual([401, 'InvalidAPIKey']);
    // Another user's keys need NetworkAdmin; a visibility outside KeyVisibility is a 400.
    expect((await call('POST', '/v2/keys/create', { userId: 13, visibility: 'Private' }, 'demo-key-1001')).errorCode).toBe('AccessDenied');
    expect((await call('POST', '/v2/keys/create', { userId: 12, visibility: 'Private' }, 'demo-key-1001')).errorCode).toBe(
      'ObjectNotFound',
    );
    expect((await call('POST', '/v2/keys/create', { userId: 11, visibility: 'Everyone' }, 'demo-key-1001')).errorCode).toBe(
      'InvalidParameter',
    );
  });

  it('reports/monthly: one row per week {week, sent, received, totalBytes}, from the parcels routed that month', async () => {
    const up = async (n: number): Promise<void> => {
      await ok('POST', '/v2/parcels/upload', { fileName: `o${n}.x12`, content: Buffer.from(x12(n)).toString('base64') }, 'demo-key-1001');
    };
    await up(1);
    await up(2);
    await emu.inject({ mailboxId: 1001, fileName: 'in.txt', content: Buffer.from('12345') });
    const now = new Date();
    const rows = await ok<{ week: number; sent: number; received: number; totalBytes: number }[]>(
      'POST',
      '/v2/reports/monthly',
      { report: 1, month: now.toISOString() },
      'demo-key-1001',
    );
    const days = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 0)).getUTCDate();
    expect(rows.map((r) => r.week)).toEqual(Array.from({ length: Math.ceil(days / 7) }, (_, i) => i + 1));
    for (const r of rows) expect(Object.keys(r).sort()).toEqual(['received', 'sent', 'totalBytes', 'week']);
    const week = rows[Math.floor((now.getUTCDate() - 1) / 7)]!;
    expect(week).toMatchObject({ sent: 2, received: 1, totalBytes: x12(1).length + x12(2).length + 5 });
    expect(rows.reduce((a, r) => a + r.sent + r.received, 0)).toBe(3);
    // Limits: only year and month count.
    const sameMonth = await ok(
      'POST',
      '/v2/reports/monthly',
      { report: 1, month: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1, 23, 59)).toISOString() },
      'demo-key-1001',
    );
    expect(sameMonth).toEqual(rows);
    expect((await call('POST', '/v2/reports/monthly', { report: 77, month: now.toISOString() })).errorCode).toBe('ObjectNotFound');
    expect((await call('POST', '/v2/reports/monthly', { report: 1 })).errorCode).toBe('InvalidParameter');
  });

  it('reports/traffic-stats: numPeriods rows per period, oldest first, counting routed parcels', async () => {
    await emu.inject({ mailboxId: 1001, fileName: 'a.txt', content: Buffer.from('abc') });
    const target = new Date(Date.now() + 60_000).toISOString();
    const rows = await ok<{ periodStart: string; periodEnd: string; sentCount: number; receivedCount: number; totalBytes: number }[]>(
      'POST',
      '/v2/reports/traffic-stats',
      { targetTime: target, numPeriods: 4, period: 'Hour' },
      'demo-key-1001',
    );
    expect(rows).toHaveLength(4);
    for (const r of rows) {
      expect(Object.keys(r).sort()).toEqual(['periodEnd', 'periodStart', 'receivedCount', 'sentCount', 'totalBytes']);
      expect(Date.parse(r.periodEnd) - Date.parse(r.periodStart)).toBe(3600_000);
    }
    for (let i = 1; i < rows.length; i++) expect(rows[i]!.periodStart).toBe(rows[i - 1]!.periodEnd);
    expect(rows.at(-1)!.periodEnd).toBe(target);
    expect(rows.at(-1)).toMatchObject({ sentCount: 0, receivedCount: 1, totalBytes: 3 });
    expect(rows.slice(0, 3).every((r) => r.receivedCount === 0)).toBe(true);
    const months = await ok<{ periodStart: string }[]>('POST', '/v2/reports/traffic-stats', {
      targetTime: '2026-03-31T00:00:00Z',
      numPeriods: 3,
      period: 'Month',
    });
    expect(months.map((r) => r.periodStart)).toEqual(['2025-12-31T00:00:00.000Z', '2026-01-31T00:00:00.000Z', '2026-02-28T00:00:00.000Z']);
    for (const bad of [{ numPeriods: 0 }, { numPeriods: -2 }, { numPeriods: 1e6 }, { period: 'Fortnight' }]) {
      const r = await call('POST', '/v2/reports/traffic-stats', { targetTime: target, numPeriods: 2, period: 'Day', ...bad });
      expect([r.status, r.errorCode]).toEqual([400, 'InvalidParameter']);
    }
  });
});

describe('writes change what reads return', () => {
  it('a carbon-copy rule copies routed parcels into its target mailbox; suspended, it stops', async () => {
    const cc = await ok<{ ccId: number }>('POST', '/v2/carboncopies/create', {
      fromMailboxId: 1001,
      toMailboxId: 1002,
      direction: 'InBox',
    });
    expect(await ok('GET', `/v2/carboncopies/${cc.ccId}`)).toMatchObject({
      ccId: cc.ccId,
      fromMailboxId: 1001,
      toMailboxId: 1002,
      status: 'Active',
      direction: 'InBox',
    });
    await emu.inject({ mailboxId: 1001, fileName: 'copied.txt', content: Buffer.from('copy me') });
    const partner = await ok<{ fileName: string; bytes: number }[]>('POST', '/v2/parcels/pending-inbox-list', {}, 'demo-key-1002');
    expect(partner.map((p) => [p.fileName, p.bytes])).toEqual([['copied.txt', 7]]);
    const copyId = (partner[0] as unknown as { parcelId: number }).parcelId;
    const dl = await ok<{ content: string }>('POST', '/v2/parcels/download', { parcelId: copyId }, 'demo-key-1002');
    expect(Buffer.from(dl.content, 'base64').toString()).toBe('copy me');
    await ok('PUT', '/v2/carboncopies/update', { ccId: cc.ccId, status: 'Suspended' });
    await emu.inject({ mailboxId: 1001, fileName: 'not-copied.txt', content: Buffer.from('x') });
    expect((await ok<unknown[]>('POST', '/v2/parcels/pending-inbox-list', {}, 'demo-key-1002')).length).toBe(1);
    expect((await ok<unknown[]>('POST', '/v2/carboncopies/list', { mailboxId: 1001 })).length).toBe(1);
    expect(await ok('DELETE', `/v2/carboncopies/${cc.ccId}`)).toBe(true);
    expect((await call('GET', `/v2/carboncopies/${cc.ccId}`)).errorCode).toBe('ObjectNotFound');
    expect(
      (await call('POST', '/v2/carboncopies/create', { fromMailboxId: 1001, toMailboxId: 1002, direction: 'InBox' }, 'demo-key-1001'))
        .errorCode,
    ).toBe('AccessDenied');
  });

  it('an OutBox rule copies what the mailbox sends', async () => {
    await ok('POST', '/v2/carboncopies/create', { fromMailboxId: 1001, toMailboxId: 1002, direction: 'OutBox' });
    await ok('POST', '/v2/parcels/upload', { fileName: 'sent.x12', content: Buffer.from(x12(9)).toString('base64') }, 'demo-key-1001');
    // The partner gets the parcel itself and the copy.
    const names = (await ok<{ fileName: string }[]>('POST', '/v2/parcels/pending-inbox-list', {}, 'demo-key-1002')).map((p) => p.fileName);
    expect(names).toEqual(['sent.x12', 'sent.x12']);
  });

  it('users: created → listed, can log in with a rule-7 password; weak passwords refused everywhere (Authentication 7); deleted → 404', async () => {
    for (const weak of ['alllower1!', 'ALLUPPER1!', 'NoDigits!!', 'NoSpecial12']) {
      expect((await call('POST', '/v2/users', { login: `w${weak}`, password: weak, email: 'w@x.example' })).message).toMatch(/^password/);
      expect((await call('POST', '/v2/users/password', { userId: 12, newPassword: weak })).message).toMatch(/^newPassword/);
      expect(
        (await call('PUT', '/v2/auth/password', { currentPassword: 'Demo-pass1', newPassword: weak }, 'demo-key-1001')).message,
      ).toMatch(/^newPassword/);
    }
    const long = `Aa1!${'x'.repeat(5000)}`;
    const u = await ok<{ userId: number }>('POST', '/v2/users', {
      login: 'newbie',
      password: long,
      email: 'n@ourco.example',
      firstName: 'New',
    });
    expect((await ok<{ login: string }[]>('POST', '/v2/users/list', { mailboxId: 1001 })).map((x) => x.login)).toContain('newbie');
    const login = await call<{ token: string }>('POST', '/v2/auth/login', { login: 'newbie', password: long }, '');
    expect(login.status).toBe(200);
    await ok('PUT', '/v2/users', { userId: u.userId, lastName: 'Comer' });
    expect(await ok('GET', `/v2/users/${u.userId}`)).toMatchObject({ firstName: 'New', lastName: 'Comer', authLevel: 'MailboxUser' });
    const dup = await call('POST', '/v2/users', { login: 'newbie', password: long, email: 'n@ourco.example' });
    expect([dup.status, dup.errorCode]).toEqual([400, 'DuplicateObject']);
    await ok('POST', '/v2/users/password', { userId: u.userId, newPassword: 'Other-pass2' });
    expect((await call('POST', '/v2/auth/login', { login: 'newbie', password: long }, '')).status).toBe(401);
    expect((await call('POST', '/v2/auth/login', { login: 'newbie', password: 'Other-pass2' }, '')).status).toBe(200);
    const gen = await ok<string>('POST', '/v2/users/generate-password', { length: 20 });
    expect(gen).toHaveLength(20);
    expect(/[a-z]/.test(gen) && /[A-Z]/.test(gen) && /\d/.test(gen) && /[^A-Za-z0-9]/.test(gen)).toBe(true);
    expect(await ok('DELETE', `/v2/users/${u.userId}`)).toBe(true);
    expect((await call('GET', `/v2/users/${u.userId}`)).errorCode).toBe('ObjectNotFound');
  });

  it('a generated API key replaces the previous one at once; reset ends bearer sessions', async () => {
    const fresh = await ok<string>('POST', '/v2/users/key-generate/11', undefined, 'demo-key-1001');
    expect((await call('GET', '/v2/users/me', undefined, 'demo-key-1001')).status).toBe(401);
    expect(await ok('GET', '/v2/users/key/11', undefined, fresh)).toBe(fresh);
    const t = await ok<{ token: string }>('POST', '/v2/auth/login', { login: 'erp', password: 'Demo-pass1' }, '');
    expect(await ok('POST', '/v2/users/reset/11')).toBe(true);
    const r = await fetch(`${emu.url}/v2/users/me`, { headers: { authorization: `Bearer ${t.token}` } });
    expect(r.status).toBe(401);
    expect(await ok('POST', '/v2/users/send-sms', { userId: 11, message: 'hello' })).toBe(true);
  });

  it('grid IDs: create (States rule 5: Active), update, VAN ID routes, move, terminate stops routing', async () => {
    const g = await ok<{ gridId: number; status: string }>('POST', '/v2/ids', { mailboxId: 1001, qualifier: '01', id: '123456789' });
    expect(g.status).toBe('Active');
    expect(await ok('PUT', `/v2/ids/${g.gridId}`, { description: 'duns', ediStandard: 'EDIFACT' })).toMatchObject({
      description: 'duns',
      ediStandard: 'EDIFACT',
    });
    expect(await ok('POST', '/v2/ids/tp-update-description', { gridId: g.gridId, description: 'DUNS' })).toBe(true);
    expect(await ok('POST', '/v2/ids/tp-get-mailbox-default', { gridId: g.gridId })).toEqual({
      mailboxId: 1001,
      networkId: 1,
      mailboxName: 'Our Company',
      status: 'Active',
    });
    // A VAN ID of the partner's grid ID: an ISA addressed to it is routed to the partner.
    expect(await ok('POST', '/v2/ids/tp-add-van', { gridId: 5002, vanQualifier: '12', vanId: '5551234567' })).toBe(true);
    expect((await call('POST', '/v2/ids/tp-add-van', { gridId: 5001, vanQualifier: '12', vanId: '5551234567' })).errorCode).toBe(
      'DuplicateObject',
    );
    const viaVan = x12(31).replace('ZZ*DEMOPARTNER    ', '12*5551234567     ');
    await ok('POST', '/v2/parcels/upload', { fileName: 'van.x12', content: Buffer.from(viaVan).toString('base64') }, 'demo-key-1001');
    expect(
      (await ok<{ fileName: string }[]>('POST', '/v2/parcels/pending-inbox-list', {}, 'demo-key-1002')).map((p) => p.fileName),
    ).toEqual(['van.x12']);
    expect(await ok('POST', '/v2/ids/tp-move', { gridId: g.gridId, newMailboxId: 1002 })).toMatchObject({ mailboxId: 1002 });
    expect(await ok('DELETE', '/v2/ids/5002')).toBe(true);
    expect(await ok('GET', '/v2/ids/5002')).toMatchObject({ status: 'Terminated' });
    const refused = await call(
      'POST',
      '/v2/parcels/upload',
      { fileName: 'x.x12', content: Buffer.from(x12(32)).toString('base64') },
      'demo-key-1001',
    );
    expect([refused.status, refused.errorCode]).toEqual([400, 'InvalidParameter']);
    const missing = await call('POST', '/v2/ids', { mailboxId: 999_999, qualifier: 'ZZ', id: 'NOPE' }, 'demo-key-root');
    expect([missing.status, missing.errorCode]).toEqual([404, 'ObjectNotFound']);
  });

  it('mailboxes and networks: create, update, config shown by get; delete terminates and stops routing into it', async () => {
    const m = await ok<{ mailboxId: number }>('POST', '/v2/mailboxes/create', { networkId: 1, uniqueId: 'NEWCO', companyName: 'New Co' });
    expect((await call('POST', '/v2/mailboxes', { networkId: 1, uniqueId: 'NEWCO', companyName: 'Again' })).errorCode).toBe(
      'DuplicateObject',
    );
    await ok('POST', '/v2/mailboxes/update', { mailboxId: m.mailboxId, companyName: 'Newer Co' });
    await ok('POST', '/v2/mailboxes/update-config', { mailboxId: m.mailboxId, deleteOnDownload: true, inBoxTimeout: 30 });
    await ok('POST', '/v2/mailboxes/x12-delimiters', {
      mailboxId: m.mailboxId,
      elementDelimiter: '*',
      subElementDelimiter: ':',
      segmentTerminator: '~',
    });
    expect(await ok('GET', `/v2/mailboxes/${m.mailboxId}`)).toMatchObject({
      companyName: 'Newer Co',
      config: { deleteOnDownload: true, inBoxTimeout: 30 },
      x12Delimiters: { subElementDelimiter: ':' },
    });
    const r = await call('DELETE', `/v2/mailboxes/${m.mailboxId}`);
    expect([r.data, typeof r.message]).toEqual([null, 'string']);
    expect(await ok('GET', `/v2/mailboxes/${m.mailboxId}`)).toMatchObject({ status: 'Terminated' });
    const refused = await fetch(`${emu.url}/_emulator/inject`, {
      method: 'POST',
      body: JSON.stringify({ mailboxId: m.mailboxId, content: 'QUJD' }),
    });
    expect(refused.status).toBe(400);
    expect(await ok('PUT', '/v2/networks/1', { companyName: 'Renamed Net', city: 'Springfield', state: 'IL' })).toMatchObject({
      companyName: 'Renamed Net',
      profile: { city: 'Springfield', state: 'IL' },
    });
    expect((await call('PUT', '/v2/networks', { networkId: 1, companyName: 'x' }, 'demo-key-1001')).errorCode).toBe('AccessDenied');
  });

  it('partners: delete terminates (routing stops), notes are listed with author and time; portals once per mailbox', async () => {
    expect(await ok('POST', '/v2/partners/note', { interconnectId: 7001, note: 'call before go-live' }, 'demo-key-1001')).toBe(true);
    const notes = await ok<{ text: string; timestamp: string; userId: number }[]>('POST', '/v2/partners/notelist', {
      interconnectId: 7001,
    });
    expect(notes).toEqual([{ text: 'call before go-live', timestamp: expect.stringMatching(ISO) as string, userId: 11 }]);
    expect(await ok('DELETE', '/v2/partners/7001', undefined, 'demo-key-1001')).toBe(true);
    expect(await ok('GET', '/v2/partners/7001')).toMatchObject({ status: 'Terminated' });
    expect(
      (await call('POST', '/v2/parcels/upload', { fileName: 'x.x12', content: Buffer.from(x12(5)).toString('base64') }, 'demo-key-1001'))
        .errorCode,
    ).toBe('InvalidParameter');
    const again = await ok<{ interconnectId: number; status: string }>(
      'POST',
      '/v2/partners',
      { gridIdFrom: 5001, gridIdTo: 5002 },
      'demo-key-1001',
    );
    expect(again.status).toBe('Active');
    const p = await ok<{ portalId: number; url: string }>('POST', '/v2/portals/create', { mailboxId: 1001 }, 'demo-key-1001');
    expect(await ok('GET', '/v2/portals/by-mailbox/1001', undefined, 'demo-key-1001')).toMatchObject({
      portalId: p.portalId,
      mailboxId: 1001,
      status: 'Active',
    });
    expect((await call('POST', '/v2/portals/create', { mailboxId: 1001 }, 'demo-key-1001')).errorCode).toBe('DuplicateObject');
    expect((await call('GET', '/v2/portals/by-mailbox/1002', undefined, 'demo-key-1001')).errorCode).toBe('ObjectNotFound');
  });

  it('comm pairing and certificates: set-pair fixes the comm between two grid IDs; renew and terminate', async () => {
    const a = await ok<{ commId: number }>('POST', '/v2/comms/create', { mailboxId: 1002, commType: 'as2', identifier: 'PARTNER-A' });
    const b = await ok<{ commId: number }>('POST', '/v2/comms/create', { mailboxId: 1002, commType: 'sftp', identifier: 'partner' });
    expect((await ok<{ commId: number }[]>('POST', '/v2/comms/pair', { gridIdFrom: 5001, gridIdTo: 5002 })).map((c) => c.commId)).toEqual([
      a.commId,
      b.commId,
    ]);
    expect(
      (await ok<{ commId: number }[]>('POST', '/v2/comms/set-pair', { gridIdFrom: 5001, gridIdTo: 5002, commId: b.commId })).map(
        (c) => c.commId,
      ),
    ).toEqual([b.commId]);
    expect((await ok<{ commId: number }[]>('POST', '/v2/comms/pair', { gridIdFrom: 5001, gridIdTo: 5002 })).map((c) => c.commId)).toEqual([
      b.commId,
    ]);
    // Any existing comm will do (the service only requires a valid comm id), also one of the sender's own mailbox.
    const own = await ok<{ commId: number }>('POST', '/v2/comms/create', { mailboxId: 1001, commType: 'ftp', identifier: 'our-side' });
    expect(
      (await ok<{ commId: number }[]>('POST', '/v2/comms/set-pair', { gridIdFrom: 5001, gridIdTo: 5002, commId: own.commId })).map(
        (c) => c.commId,
      ),
    ).toEqual([own.commId]);
    expect((await call('POST', '/v2/comms/set-pair', { gridIdFrom: 5001, gridIdTo: 5002, commId: 987654 })).errorCode).toBe(
      'InvalidParameter',
    );
    const created = await ok<{ certKeyId: number; withCerts: boolean }>('POST', '/v2/certificates/create', {
      commId: a.commId,
      usage: 'Signature',
    });
    expect(created.withCerts).toBe(true);
    const renewed = await ok<{ certKeyId: number }>('POST', '/v2/certificates/renew', {
      commId: a.commId,
      certKeyId: created.certKeyId,
      years: 1,
    });
    expect(renewed.certKeyId).not.toBe(created.certKeyId);
    expect(await ok('POST', '/v2/certificates/terminate', { commId: a.commId, certKeyId: created.certKeyId })).toBe(true);
    expect(await ok('POST', '/v2/certificates/terminate', { commId: a.commId, certKeyId: renewed.certKeyId })).toBe(true);
    expect(await ok('GET', `/v2/comms/${a.commId}`)).toMatchObject({ withCerts: false });
    expect((await call('POST', '/v2/certificates/terminate', { commId: a.commId, certKeyId: renewed.certKeyId })).errorCode).toBe(
      'ObjectNotFound',
    );
    expect(
      (await call('POST', '/v2/certificates/add-private', { commId: a.commId, certType: 'X509', cert: 'not base64 !' })).errorCode,
    ).toBe('InvalidParameter');
  });

  it('state survives a restart (SQLite file)', async () => {
    const c = await ok<{ commId: number }>('POST', '/v2/comms/create', { mailboxId: 1001, commType: 'ftp', identifier: 'kept' });
    const k = await ok<{ key: string }>('POST', '/v2/keys/create', { userId: 11, visibility: 'Shared' }, 'demo-key-1001');
    await ok('POST', '/v2/carboncopies/create', { fromMailboxId: 1001, toMailboxId: 1002, direction: 'NoDir' });
    await emu.close();
    emu = await startEmulator({ dataFile: path.join(dir, 'emu.sqlite') });
    expect(await ok('GET', `/v2/comms/${c.commId}`)).toMatchObject({ identifier: 'kept' });
    expect(await ok('GET', '/v2/users/me', undefined, k.key)).toMatchObject({ userId: 11 });
    expect((await ok<unknown[]>('POST', '/v2/carboncopies/list', {})).length).toBe(1);
    const c2 = await ok<{ commId: number }>('POST', '/v2/comms/create', { mailboxId: 1001, commType: 'ftp', identifier: 'after' });
    expect(c2.commId).toBeGreaterThan(c.commId);
  });
});
