// Hostile round 3: a service whose outbox list answers the same full page whatever page is asked
// (pageNo ignored), or states an endless total. An upload whose answer was lost is looked for in
// that list before any resend; the search read page after page for ever, and `once` never ended.
// The built CLI runs against scripted REST and SOAP services (not our emulator).
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { onceChild } from '../../helpers/daemon-child.js';
import { soapService, DROP } from '../../helpers/scripted-soap.js';
import { invoiceDropWorld } from '../../helpers/invoice-drop.js';
import { startScriptedService, wireJson } from '../../helpers/scripted-service.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/**
 * One ERP file, `once` against `api` (whose first upload answer is lost, so the client searches the
 * outbox list for it): the run ends well inside its drain timeout, and the file ends in errorDir
 * after maxAttempts with the listing's refusal as the reason.
 */
async function sendsOnceWithLostAnswer(api: Record<string, unknown>): Promise<void> {
  const w = invoiceDropWorld({ api, once: { drainTimeout: '20s' } });
  cleanups.push(() => w.cleanup());
  const started = Date.now();
  await onceChild(w.configFile);
  expect(Date.now() - started).toBeLessThan(20_000);
  expect(fs.readFileSync(path.join(w.error, 'invoice-810.x12.error.json'), 'utf8')).toContain('repeats');
}

describe('a REST outbox list that repeats its first page whatever page is asked (pageNo ignored)', () => {
  it('an unknown upload is looked for in a bounded number of pages, then errorDir after maxAttempts', async () => {
    const svc = await startScriptedService({ apiKey: 'foreign-key-7Hq2' });
    cleanups.push(() => svc.close());
    let uploads = 0;
    let lists = 0;
    const page = Array.from({ length: 500 }, (_, i) => ({
      parcelId: 9_000_000 + i,
      mailboxId: 1001,
      fileName: `other-${i}.x12`,
      bytes: 10,
      status: 'outboxPending',
      created: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    }));
    svc.variants.fault = (req, res) => {
      if (req.path === '/v2/parcels/upload' && ++uploads === 1) {
        res.socket?.destroy();
        return true;
      }
      if (req.path !== '/v2/parcels/outbox-list') return false;
      lists++;
      res.writeHead(200, { 'content-type': 'application/json', date: new Date().toUTCString() });
      res.end(wireJson({ success: true, data: page, errorCode: '', message: '' }));
      return true;
    };
    await sendsOnceWithLostAnswer({ baseUrl: svc.url, protocol: 'rest', apiKey: svc.apiKey });
    expect(lists).toBeLessThanOrEqual(10);
  }, 90_000);
});

describe('a SOAP outbox archive that repeats its first page and states an endless total', () => {
  it('the same: a bounded search, then errorDir after maxAttempts', async () => {
    let uploads = 0;
    let archivePages = 0;
    const page = Array.from(
      { length: 500 },
      (_, i) =>
        `<ParcelIDInfo><ParcelID>${9_000_000 + i}</ParcelID><ParcelBytes>10</ParcelBytes><ParcelDate>${new Date().toISOString()}</ParcelDate>` +
        `<MailboxIDFrom>1001</MailboxIDFrom><FileName>other-${i}.x12</FileName><StatusCode>OutBoxArchived</StatusCode></ParcelIDInfo>`,
    ).join('');
    const soap = await soapService((op) => {
      if (op.startsWith('ParcelUpload') && ++uploads === 1) return DROP;
      if (op === 'ParcelOutBoxArchiveEx') {
        archivePages++;
        return `<${op}Result><Count>500</Count><TotalRecords>2000000000</TotalRecords><ParcelIDInfoList>${page}</ParcelIDInfoList></${op}Result>`;
      }
      if (op.startsWith('ParcelOutBox'))
        return `<${op}Result><Count>0</Count><TotalRecords>0</TotalRecords><ParcelIDInfoList/></${op}Result>`;
      return undefined;
    });
    cleanups.push(() => soap.close());
    const url = soap.url;
    await sendsOnceWithLostAnswer({ baseUrl: url, protocol: 'soap', apiKey: 'pages-key-5Tz1' });
    expect(uploads).toBe(1);
    expect(archivePages).toBeLessThanOrEqual(10);
  }, 90_000);
});
