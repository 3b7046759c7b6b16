// The npm `soap` package, a SOAP client nobody here wrote, builds itself from the emulator's WSDL
// and runs the workflow: login, inbox, download, confirm, upload, a fault, and SOAP 1.2.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as soap from 'soap';
import { startEmulator, type Emulator } from '@gridsync/emulator';

let emu: Emulator;
let wsdl: string;
beforeAll(async () => {
  emu = await startEmulator({ settings: { acknowledgeDelayMs: 60_000 } });
  wsdl = `${emu.url}/v4.1/prod/GridOS.asmx?WSDL`;
});
afterAll(async () => {
  await emu.close();
});

type Client = soap.Client & Record<string, (args: unknown) => Promise<[Record<string, any>, string]>>;

describe('npm soap against the emulator', () => {
  it('runs login, inbox, download, confirm, upload and a fault over SOAP 1.1', async () => {
    // Longs as BigInt: the package reads xs:long as a JS number otherwise.
    const client = (await soap.createClientAsync(wsdl, { customDeserializer: { long: (t: string) => BigInt(t) } })) as Client;
    const content = Buffer.from('ISA*00*npm soap~');
    const id = await emu.inject({ mailboxId: 1001, fileName: 'npm.x12', content, gridIdFrom: 5002, gridIdTo: 5001 });
    const [login] = await client.LoginAsync!({ LoginName: 'erp', Password: 'Demo-pass1' });
    const sid = login.LoginResult as string;
    expect(sid).toMatch(/^[0-9A-F-]{36}$/);
    const [inbox] = await client.ParcelInBoxAsync!({ SessionID: sid });
    const items = inbox.ParcelInBoxResult.ParcelIDInfoList.ParcelIDInfo as Record<string, unknown>[];
    expect(items.map((p) => [p.ParcelID, p.FileName, p.Direction])).toEqual([[BigInt(id), 'npm.x12', 'InBox']]);
    const [dl] = await client.ParcelDownloadAsync!({ SessionID: sid, ParcelID: String(id) });
    expect(Buffer.from(dl.ParcelDownloadResult.Content as string, 'base64').equals(content)).toBe(true);
    expect(dl.ParcelDownloadResult.Bytes).toBe(content.length);
    const [confirm] = await client.ParcelDownloadConfirmAsync!({ SessionID: sid, ParcelID: String(id) });
    expect(confirm.ParcelDownloadConfirmResult).toBe(true);
    const [after] = await client.ParcelInBoxAsync!({ SessionID: sid });
    expect(after.ParcelInBoxResult.Count).toBe(0);
    const file = Buffer.from('hello from npm soap');
    const [up] = await client.ParcelUploadMftAsync!({
      SessionID: sid,
      FileName: 'npm-out.txt',
      Bytes: file.length,
      Content: file.toString('base64'),
      GridIDFrom: 5001,
      GridIDTo: 5002,
    });
    const outId = up.ParcelUploadMftResult as number;
    expect(outId).toBeGreaterThan(0);
    const [info] = await client.ParcelInfoAsync!({ SessionID: sid, ParcelID: String(outId) });
    expect(info.ParcelInfoResult).toMatchObject({ FileName: 'npm-out.txt', ParcelBytes: file.length, Direction: 'OutBox' });
    const err = (await client.ParcelInfoAsync!({ SessionID: 'AAAAAAAA-0000-0000-0000-000000000000', ParcelID: '1' }).catch(
      (e: unknown) => e,
    )) as { root: any; response: { status: number } };
    expect(err.response.status).toBe(500);
    const fault = err.root.Envelope.Body.Fault;
    expect(fault.faultcode).toBe('soap:Client');
    expect(fault.detail.ErrorInfo).toMatchObject({ ErrorCode: '5', ErrorItem: 'SessionID' });
    expect(String(fault.detail.GridOSSOAPErrorCode)).toBe('5');
    const [logout] = await client.LogoutAsync!({ SessionID: sid });
    expect(logout.LogoutResult).toBe(0);
  });

  it('calls over SOAP 1.2', async () => {
    const client = await soap.createClientAsync(wsdl, { forceSoap12Headers: true });
    const port = (
      client as unknown as Record<string, Record<string, Record<string, (a: unknown, cb: (err: unknown, r: any) => void) => void>>>
    ).GridOS_x0020_API_x0020_v4!.GridOS_x0020_API_x0020_v4Soap12!;
    const who = await new Promise<any>((resolve, reject) =>
      port.WhoAmI!({ SessionID: 'demo-key-1001' }, (e, r) => (e ? reject(e) : resolve(r))),
    );
    expect(who.WhoAmIResult).toMatchObject({ UserID: 11, MailboxID: 1001, AuthLevel: 'MailboxAdmin' });
    expect(client.lastRequest).toContain('http://www.w3.org/2003/05/soap-envelope');
    expect(JSON.stringify(client.lastRequestHeaders)).toContain('application/soap+xml');
    const fault = await new Promise<any>((resolve) => port.ParcelInfo!({ SessionID: 'demo-key-1001', ParcelID: '42' }, (e) => resolve(e)));
    expect(fault.response.status).toBe(500);
    expect(JSON.stringify(fault.root)).toContain('"ErrorCode":"4"');
  });
});
