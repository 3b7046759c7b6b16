// Python zeep, a SOAP client nobody here wrote, builds itself from the emulator's WSDL and runs
// the workflow: login, inbox, download, confirm, upload, listings, a fault, SOAP 1.2. zeep checks
// every response strictly against the WSDL (order, required elements, unknown elements): a schema
// violation fails the test. Skips with a notice where zeep is not installed (CI installs it).
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '@gridsync/emulator';
import { repoRoot } from '../../helpers/journal-child.js';
import { prerequisite } from '../../helpers/require-tool.js';

const found = ['python3', '/usr/bin/python3'].find((p) => spawnSync(p, ['-c', 'import zeep'], { stdio: 'ignore' }).status === 0);
const python = prerequisite('python3 with zeep (python3-zeep)', found !== undefined, 'the third-party SOAP client is not run')
  ? found
  : undefined;

let emu: Emulator;
beforeAll(async () => {
  emu = await startEmulator({ settings: { acknowledgeDelayMs: 60_000 } });
});
afterAll(async () => {
  await emu.close();
});

describe.skipIf(!python)('zeep against the emulator', () => {
  it('runs the workflow over SOAP 1.1 and 1.2 and finds no schema violation', async () => {
    const content = Buffer.from('ISA*00*hello zeep~');
    const parcelId = await emu.inject({ mailboxId: 1001, fileName: 'from-partner.x12', content, gridIdFrom: 5002, gridIdTo: 5001 });
    // Asynchronous: the emulator answers from this very process.
    const child = spawn(python as string, [
      path.join(repoRoot, 'test/thirdparty/zeep_client.py'),
      `${emu.url}/v4.1/prod/GridOS.asmx?WSDL`,
      'demo-key-1001',
      String(parcelId),
      'zeep-up.x12',
    ]);
    const r = { stdout: '', stderr: '', status: null as number | null };
    child.stdout.on('data', (d: Buffer) => (r.stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (r.stderr += d.toString()));
    r.status = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout) as Record<string, any>;
    expect(out.session).toMatch(/^[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}$/);
    expect(out.whoami).toEqual({ UserID: 11, MailboxID: 1001, TimeOut: 1200, AuthLevel: 'MailboxAdmin' });
    expect(out.sessionStatus).toBe('Open');
    expect(out.inbox).toEqual([{ ParcelID: parcelId, FileName: 'from-partner.x12', ParcelBytes: content.length, Direction: 'InBox' }]);
    expect(out.info).toEqual({ StatusCode: 'InBoxReady', ParcelID: parcelId });
    expect(Buffer.from(out.download.content, 'base64').equals(content)).toBe(true);
    expect(out.download.Bytes).toBe(content.length);
    expect(out.download.Standard).toBe('X12');
    expect(out.downloadA).toBe(content.toString('base64'));
    expect([out.confirm, out.confirmAgain]).toEqual([true, true]);
    expect(out.inboxAfter).toBe(0);
    expect(out.upload).toBeGreaterThan(0);
    expect(out.uploadMft).toBeGreaterThan(out.upload);
    expect(out.outboxInProcess).toBe(2);
    expect(out.outboxArchive + out.outboxError).toBe(0);
    expect(out.tpList).toEqual([5001]);
    expect(out.mailboxes).toEqual([1001]);
    expect(out.interconnects).toEqual([7001]);
    expect(out.user).toBe('erp');
    expect(out.interchanges).toBe(1);
    expect(out.fault).toEqual({
      code: 'soap:Client',
      message: 'Invalid SessionID',
      ErrorCode: '5',
      ErrorItem: 'SessionID',
      GridOSSOAPErrorCode: '5',
    });
    expect(out.logout).toBe(0);
    expect(out.soap12.UserID).toBe(11);
    expect(out.fault12).toMatchObject({ ErrorCode: '4' });
  }, 90_000);
});
