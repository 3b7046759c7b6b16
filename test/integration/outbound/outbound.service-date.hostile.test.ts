// Hostile round 4: the SOAP side of outbound.service-clock.test.ts's five-years-ahead `Date`. A
// proxy with a broken clock dates every answer five years ahead while the service stamps its
// parcels truly; an upload's answer is lost. The search for it was put five years ahead and found
// nothing, and the file was uploaded again. The built CLI against a scripted SOAP service.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startCli } from '../../helpers/daemon-child.js';
import { INVOICE, invoiceDropWorld } from '../../helpers/invoice-drop.js';
import { DROP, soapService } from '../../helpers/scripted-soap.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const FIVE_YEARS_MS = 5 * 365 * 86_400_000;

describe('a SOAP service whose Date header reads five years ahead of its parcel stamps', () => {
  it('an upload whose answer was lost is not sent again: errorDir after maxAttempts, naming the clock', async () => {
    let uploads = 0;
    let stored: { date: string; bytes: number } | undefined;
    const soap = await soapService(
      (op, body) => {
        if (op.startsWith('ParcelUpload') && ++uploads === 1) {
          // Taken, then the answer lost.
          stored = { date: new Date().toISOString(), bytes: INVOICE.length };
          return DROP;
        }
        if (op === 'ParcelOutBoxArchiveEx') {
          const begin = Date.parse(/<(?:\w+:)?BeginDate>([^<]+)</.exec(body)?.[1] ?? '');
          const rows =
            stored && Date.parse(stored.date) >= begin
              ? `<ParcelIDInfo><ParcelID>9000001</ParcelID><ParcelBytes>${stored.bytes}</ParcelBytes><ParcelDate>${stored.date}</ParcelDate>` +
                `<MailboxIDFrom>1001</MailboxIDFrom><FileName>invoice-810.x12</FileName><StatusCode>OutBoxArchived</StatusCode></ParcelIDInfo>`
              : '';
          return `<${op}Result><Count>${rows ? 1 : 0}</Count><TotalRecords>${rows ? 1 : 0}</TotalRecords><ParcelIDInfoList>${rows}</ParcelIDInfoList></${op}Result>`;
        }
        if (op.startsWith('ParcelOutBox'))
          return `<${op}Result><Count>0</Count><TotalRecords>0</TotalRecords><ParcelIDInfoList/></${op}Result>`;
        return undefined;
      },
      { dateOffsetMs: FIVE_YEARS_MS },
    );
    cleanups.push(() => soap.close());
    const url = soap.url;
    const w = invoiceDropWorld({ api: { baseUrl: url, protocol: 'soap', apiKey: 'date-key-8Rw3' }, once: { drainTimeout: '20s' } });
    cleanups.push(() => w.cleanup());
    const child = startCli(['once', '-c', w.configFile], {}, w.dir);
    cleanups.push(() => child.kill('SIGKILL'));
    await child.exited;
    expect(uploads).toBe(1);
    expect(fs.readFileSync(path.join(w.error, 'invoice-810.x12.error.json'), 'utf8')).toMatch(/clock/);
  }, 90_000);
});
