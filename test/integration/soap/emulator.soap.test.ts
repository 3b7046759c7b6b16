// The emulator's SOAP endpoint from the outside: hand-written envelopes (other prefixes, SOAP 1.2
// without an action), raw HTTP, the fault format, sessions (idle expiry, per-user limit, logout,
// API keys), the shared store with REST, and the REST fault-injection switches.
import { afterEach, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '@gridsync/emulator';

const NS = 'https://os.grid.example/';
const ENV11 = 'http://schemas.xmlsoap.org/soap/envelope/';
const ENV12 = 'http://www.w3.org/2003/05/soap-envelope';
let emu: Emulator | undefined;
let clock = Date.parse('2026-05-07T08:00:00Z');

async function start(settings: Record<string, unknown> = {}): Promise<Emulator> {
  clock = Date.parse('2026-05-07T08:00:00Z');
  emu = await startEmulator({ now: () => clock, settings: { acknowledgeDelayMs: 60_000, ...settings } });
  return emu;
}
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

async function post(
  op: string,
  inner: string,
  opts: { v12?: boolean; action?: string | null; key?: string } = {},
): Promise<{ status: number; text: string; type: string }> {
  const env = opts.v12 ? ENV12 : ENV11;
  const action = opts.action === undefined ? `${NS}${op}` : opts.action;
  const headers: Record<string, string> = opts.v12
    ? { 'content-type': `application/soap+xml; charset=utf-8${action ? `; action="${action}"` : ''}` }
    : { 'content-type': 'text/xml; charset=utf-8', ...(action !== null ? { soapaction: `"${action}"` } : {}) };
  const body = `<?xml version="1.0"?><x:Envelope xmlns:x="${env}"><x:Body><q:${op} xmlns:q="${NS}">${inner}</q:${op}></x:Body></x:Envelope>`;
  const r = await fetch(`${emu!.url}/v4.1/prod/GridOS.asmx`, { method: 'POST', headers, body });
  return { status: r.status, text: await r.text(), type: r.headers.get('content-type') ?? '' };
}
const tag = (xml: string, name: string): string | undefined =>
  new RegExp(`<(?:\\w+:)?${name}(?: [^>]*)?>([^<]*)</(?:\\w+:)?${name}>`).exec(xml)?.[1];
const sid = (s: string): string => `<q:SessionID>${s}</q:SessionID>`;

describe('SOAP endpoint', () => {
  it('serves a WSDL whose address is the emulator itself, and an operation list', async () => {
    await start();
    const w = await fetch(`${emu!.url}/v4.1/prod/GridOS.asmx?wsdl`);
    const text = await w.text();
    expect(w.headers.get('content-type')).toContain('text/xml');
    expect(text).toContain(`location="${emu!.url}/v4.1/prod/GridOS.asmx"`);
    expect(text).toContain('<wsdl:port name="GridOS_x0020_API_x0020_v4Soap12"');
    expect((await fetch(`${emu!.url}/v4.1/prod/GridOS.asmx`)).status).toBe(200);
    expect((await fetch(`${emu!.url}/v4.1/prod/Other.asmx`)).status).toBe(404);
  });

  it('answers faults with HTTP 500, both detail elements, and the SOAP 1.2 form on 1.2', async () => {
    await start();
    const unknown = await post('Nope', '');
    expect(unknown.status).toBe(500);
    expect(tag(unknown.text, 'faultcode')).toBe('soap:Client');
    expect(tag(unknown.text, 'ErrorCode')).toBe('0');
    expect(tag(unknown.text, 'GridOSSOAPErrorCode')).toBe('0');
    const missing = await post('WhoAmI', sid('demo-key-1001'), { action: null });
    expect(missing.status).toBe(500);
    expect(tag(missing.text, 'faultstring')).toMatch(/SOAPAction/);
    const mismatch = await post('WhoAmI', sid('demo-key-1001'), { action: `${NS}ParcelInBox` });
    expect(tag(mismatch.text, 'faultstring')).toMatch(/does not match/);
    const v12 = await post('ParcelInfo', `${sid('demo-key-1001')}<q:ParcelID>42</q:ParcelID>`, { v12: true });
    expect(v12.status).toBe(500);
    expect(v12.type).toContain('application/soap+xml');
    expect(tag(v12.text, 'Value')).toBe('soap:Sender');
    expect(tag(v12.text, 'ErrorCode')).toBe('4');
    const badNumber = await post('ParcelInfo', `${sid('demo-key-1001')}<q:ParcelID>12ab</q:ParcelID>`);
    expect(tag(badNumber.text, 'ErrorCode')).toBe('8');
    expect(tag(badNumber.text, 'ErrorItem')).toBe('ParcelID');
    const malformed = await fetch(`${emu!.url}/v4.1/prod/GridOS.asmx`, {
      method: 'POST',
      headers: { 'content-type': 'text/xml', soapaction: `"${NS}Version"` },
      body: '<a><b></a>',
    });
    expect(malformed.status).toBe(500);
    expect(await malformed.text()).toContain('Server was unable to read request');
  });

  it('SOAP 1.2 without an action dispatches on the body element; aliases work, unknown children are ignored', async () => {
    await start();
    const who = await post('WhoAmI', `${sid('demo-key-1001')}<q:Extra>1</q:Extra>`, { v12: true, action: null });
    expect(who.status).toBe(200);
    expect(tag(who.text, 'MailboxID')).toBe('1001');
    const alias = await post('SessionInfo', sid('demo-key-1001'));
    expect(alias.text).toContain('<SessionInfoResponse');
    expect(tag(alias.text, 'UserID')).toBe('11');
    const refused = await post('NetworkAdd', sid('demo-key-root'));
    expect(tag(refused.text, 'ErrorCode')).toBe('10');
  });

  it('sessions: login with a GUID, idle expiry, the per-user limit, logout; API keys never expire', async () => {
    await start({ soap: { sessionTimeoutS: 60, maxSessionsPerUser: 2 } });
    const login = async (): Promise<{ status: number; text: string }> =>
      post('Login', '<q:LoginName>erp</q:LoginName><q:Password>Demo-pass1</q:Password>');
    const a = tag((await login()).text, 'LoginResult') as string;
    expect(a).toMatch(/^[0-9A-F-]{36}$/);
    const b = tag((await login()).text, 'LoginResult') as string;
    const third = await login();
    expect(third.status).toBe(500);
    expect(tag(third.text, 'ErrorCode')).toBe('3');
    expect(tag((await post('WhoAmI', sid(a))).text, 'OpenSessions')).toBe('2');
    expect(tag((await post('WhoAmI', sid(a))).text, 'TimeOut')).toBe('60');
    clock += 45_000;
    expect((await post('WhoAmI', sid(a))).status).toBe(200); // a is used, b idles
    clock += 30_000;
    const expired = await post('WhoAmI', sid(b));
    expect(tag(expired.text, 'ErrorCode')).toBe('2');
    expect(tag(expired.text, 'ErrorItem')).toBe('SessionID');
    expect(tag((await post('Logout', sid(a))).text, 'LogoutResult')).toBe('0');
    expect(tag((await post('WhoAmI', sid(a))).text, 'ErrorCode')).toBe('2');
    expect((await login()).status).toBe(200);
    const wrong = await post('Login', '<q:LoginName>erp</q:LoginName><q:Password>nope</q:Password>');
    expect(tag(wrong.text, 'ErrorCode')).toBe('3');
    const byEmail = await post('Login', '<q:Email>erp@ourco.example</q:Email><q:Password>Demo-pass1</q:Password>');
    expect(byEmail.status).toBe(200);
    clock += 10 * 86_400_000;
    expect((await post('WhoAmI', sid('demo-key-1001'))).status).toBe(200);
    expect(tag((await post('WhoAmI', sid('11111111-2222-3333-4444-555555555555'))).text, 'ErrorCode')).toBe('5');
  });

  it('expires every session on demand', async () => {
    await start();
    const a = tag((await post('Login', '<q:LoginName>erp</q:LoginName><q:Password>Demo-pass1</q:Password>')).text, 'LoginResult') as string;
    const r = await fetch(`${emu!.url}/_emulator/soap/expire-sessions`, { method: 'POST' });
    expect(((await r.json()) as { data: { expired: number } }).data.expired).toBe(1);
    expect(tag((await post('WhoAmI', sid(a))).text, 'ErrorCode')).toBe('2');
  });

  it('shares the store with REST: a parcel confirmed over SOAP is confirmed for REST', async () => {
    await start();
    const id = await emu!.inject({ mailboxId: 1001, fileName: 'a.txt', content: Buffer.from('hello') });
    const list = await post(
      'ParcelInBoxEx',
      `${sid('demo-key-1001')}<q:NetworkID>0</q:NetworkID><q:MailboxID>0</q:MailboxID><q:GridIDFrom>0</q:GridIDFrom><q:GridIDTo>0</q:GridIDTo>`,
    );
    expect(tag(list.text, 'ParcelID')).toBe(String(id));
    const dl = await post('ParcelDownload', `${sid('demo-key-1001')}<q:ParcelID>${id}</q:ParcelID>`);
    expect(Buffer.from(tag(dl.text, 'Content') as string, 'base64').toString()).toBe('hello');
    expect(
      tag(
        (await post('ParcelDownloadConfirm', `${sid('demo-key-1001')}<q:ParcelID>${id}</q:ParcelID>`)).text,
        'ParcelDownloadConfirmResult',
      ),
    ).toBe('true');
    const rest = await fetch(`${emu!.url}/v2/parcels/${id}`, { headers: { 'x-api-key': 'demo-key-1001' } });
    expect(((await rest.json()) as { data: { status: string } }).data.status).toBe('InBoxTransferred');
    expect(
      tag((await post('ParcelDownloadReset', `${sid('demo-key-1001')}<q:ParcelID>${id}</q:ParcelID>`)).text, 'ParcelDownloadResetResult'),
    ).toBe('true');
    expect(tag((await post('ParcelInBox', sid('demo-key-1001'))).text, 'Count')).toBe('1');
    const other = await post('ParcelInfo', `${sid('demo-key-1002')}<q:ParcelID>${id}</q:ParcelID>`);
    expect(tag(other.text, 'ErrorCode')).toBe('4');
  });

  it('uploads: Bytes must match, bad base64 and empty names are faults, whitespace in base64 is fine', async () => {
    await start();
    const b64 = Buffer.from('hello partner').toString('base64');
    const spaced = `${b64.slice(0, 4)}\n  ${b64.slice(4)}`;
    const ok = await post(
      'ParcelUploadMft',
      `${sid('demo-key-1001')}<q:FileName>x.txt</q:FileName><q:Bytes>13</q:Bytes><q:Content>${spaced}</q:Content><q:GridIDFrom>5001</q:GridIDFrom><q:GridIDTo>5002</q:GridIDTo>`,
    );
    expect(Number(tag(ok.text, 'ParcelUploadMftResult'))).toBeGreaterThan(0);
    const wrongBytes = await post(
      'ParcelUploadMft',
      `${sid('demo-key-1001')}<q:FileName>x.txt</q:FileName><q:Bytes>12</q:Bytes><q:Content>${b64}</q:Content><q:GridIDFrom>5001</q:GridIDFrom><q:GridIDTo>5002</q:GridIDTo>`,
    );
    expect(tag(wrongBytes.text, 'ErrorCode')).toBe('9');
    const bad = await post(
      'ParcelUploadMft',
      `${sid('demo-key-1001')}<q:FileName>x.txt</q:FileName><q:Bytes>3</q:Bytes><q:Content>@@@!</q:Content><q:GridIDFrom>5001</q:GridIDFrom><q:GridIDTo>5002</q:GridIDTo>`,
    );
    expect(tag(bad.text, 'ErrorCode')).toBe('8');
    const noName = await post('ParcelUploadA', `${sid('demo-key-1001')}<q:FileName></q:FileName><q:ContentBase64>${b64}</q:ContentBase64>`);
    expect(tag(noName.text, 'ErrorCode')).toBe('9');
    const unroutable = await post(
      'ParcelUpload',
      `${sid('demo-key-1001')}<q:FileName>x.txt</q:FileName><q:Bytes>13</q:Bytes><q:Content>${b64}</q:Content>`,
    );
    expect(tag(unroutable.text, 'ErrorCode')).toBe('10');
    const outbox = await post('ParcelOutBoxInProcessEx', `${sid('demo-key-1001')}<q:NetworkID>0</q:NetworkID><q:MailboxID>0</q:MailboxID>`);
    expect(tag(outbox.text, 'Count')).toBe('1');
  });

  it('applies the REST fault switches: 503 without an envelope, soap:Server code 12, resets', async () => {
    await start();
    emu!.setFaults({
      rules: [
        { endpoint: 'parcels.pendingInboxList', rate503: 1 },
        { endpoint: 'users.me', rate500: 1 },
        { endpoint: 'soap.NowUTC', resetBeforeRate: 1 },
      ],
    });
    const r503 = await post('ParcelInBox', sid('demo-key-1001'));
    expect(r503.status).toBe(503);
    expect(r503.text).not.toContain('Envelope');
    const r500 = await post('WhoAmI', sid('demo-key-1001'));
    expect(r500.status).toBe(500);
    expect(tag(r500.text, 'faultcode')).toBe('soap:Server');
    expect(tag(r500.text, 'ErrorCode')).toBe('12');
    await expect(post('NowUTC', '')).rejects.toThrow();
    expect(emu!.faultCounts()).toMatchObject({ '503': 1, '500': 1, resetBefore: 1 });
  });

  it('serves the form binding: form fields in, the bare result out, plain-text errors', async () => {
    await start();
    const id = await emu!.inject({ mailboxId: 1001, fileName: 'form.txt', content: Buffer.from('via form') });
    const form = (op: string, fields: Record<string, string>): Promise<Response> =>
      fetch(`${emu!.url}/v4.1/prod/GridOS.asmx/${op}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(fields).toString(),
      });
    const inbox = await form('ParcelInBox', { SessionID: 'demo-key-1001' });
    const text = await inbox.text();
    expect(inbox.status).toBe(200);
    expect(text).toMatch(/^<\?xml[^>]*\?><ParcelIDInfoCollection xmlns="https:\/\/os\.grid\.example\/">/);
    expect(tag(text, 'ParcelID')).toBe(String(id));
    const dl = await (await form('ParcelDownload', { SessionID: 'demo-key-1001', ParcelID: String(id) })).text();
    expect(dl).toContain('<FileInfo xmlns="https://os.grid.example/">');
    expect(Buffer.from(tag(dl, 'Content') as string, 'base64').toString()).toBe('via form');
    const ok = await (await fetch(`${emu!.url}/v4.1/prod/GridOS.asmx/ParcelDownloadConfirm?SessionID=demo-key-1001&ParcelID=${id}`)).text();
    expect(ok).toMatch(/<boolean xmlns="https:\/\/os\.grid\.example\/">true<\/boolean>$/);
    const up = await form('ParcelUploadMftA', {
      SessionID: 'demo-key-1001',
      FileName: 'f.txt',
      ContentBase64: Buffer.from('up').toString('base64'),
      GridIDFrom: '5001',
      GridIDTo: '5002',
    });
    expect(Number(/<int[^>]*>(\d+)<\/int>/.exec(await up.text())?.[1])).toBeGreaterThan(0);
    const missing = await form('ParcelInfo', { SessionID: 'demo-key-1001' });
    expect(missing.status).toBe(500);
    expect(missing.headers.get('content-type')).toContain('text/plain');
    expect(await missing.text()).toBe('Missing parameter: ParcelID.');
    const denied = await form('ParcelInfo', { SessionID: 'nope', ParcelID: '1' });
    expect([denied.status, await denied.text()]).toEqual([500, 'Invalid SessionID']);
  });

  it('counts interconnects (InterconnectCount, named in the operation mapping), in the WSDL too', async () => {
    await start();
    const wsdl = await (await fetch(`${emu!.url}/v4.1/prod/GridOS.asmx?wsdl`)).text();
    expect(wsdl).toContain('<wsdl:operation name="InterconnectCount">');
    const all = await post('InterconnectCount', `${sid('demo-key-1001')}<q:GridID>5001</q:GridID>`);
    expect(all.status).toBe(200);
    expect(tag(all.text, 'InterconnectCountResult')).toBe('1');
    const active = await post('InterconnectCount', `${sid('demo-key-1001')}<q:GridID>5001</q:GridID><q:Status>Active</q:Status>`);
    expect(tag(active.text, 'InterconnectCountResult')).toBe('1');
    const cancelled = await post('InterconnectCount', `${sid('demo-key-1001')}<q:GridID>5001</q:GridID><q:Status>Cancelled</q:Status>`);
    expect(tag(cancelled.text, 'InterconnectCountResult')).toBe('0');
    const bad = await post('InterconnectCount', `${sid('demo-key-1001')}<q:GridID>5001</q:GridID><q:Status>Sometimes</q:Status>`);
    expect(tag(bad.text, 'ErrorItem')).toBe('Status');
    const unknown = await post('InterconnectCount', `${sid('demo-key-1001')}<q:GridID>999999</q:GridID>`);
    expect(tag(unknown.text, 'ErrorCode')).toBe('4');
  });

  it('shows parcel ids beyond 2^53 exactly with the id offset switch', async () => {
    await start({ soap: { parcelIdOffset: '9007199254740993000' } });
    const id = await emu!.inject({ mailboxId: 1001, fileName: 'a.txt', content: Buffer.from('hello') });
    const big = (9007199254740993000n + BigInt(id)).toString();
    expect(tag((await post('ParcelInBox', sid('demo-key-1001'))).text, 'ParcelID')).toBe(big);
    expect(tag((await post('ParcelInfo', `${sid('demo-key-1001')}<q:ParcelID>${big}</q:ParcelID>`)).text, 'FileName')).toBe('a.txt');
  });
});
