// Hostile round 4: the SOAP side of outbound.service-clock.test.ts's five-years-ahead `Date`. A
// proxy with a broken clock dates every answer five years ahead while the service stamps its
// parcels truly; an upload's answer is lost. The search for it was put five years ahead and found
// nothing, and the file was uploaded again. The built CLI against a scripted SOAP service.
// Round 5: the same with the `Date` wrong by hours, which the 24-hour tolerance let through.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startCli } from '../../helpers/daemon-child.js';
import type { DaemonWorld } from '../../helpers/daemon-config.js';
import { INVOICE, invoiceDropWorld } from '../../helpers/invoice-drop.js';
import { DROP, soapService } from '../../helpers/scripted-soap.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const HOUR_MS = 3_600_000;
const FIVE_YEARS_MS = 5 * 365 * 24 * HOUR_MS;

/**
 * One `gridsync once` against a service that takes the first upload and loses its answer. Its
 * answers are dated `dateOffsetMs` from the real time, its parcels stamped `stampOffsetMs` from it;
 * the archive list answers between BeginDate and EndDate, as the real one does.
 */
async function lostAnswer(dateOffsetMs: number, stampOffsetMs = 0): Promise<{ uploads: number; w: DaemonWorld }> {
  let uploads = 0;
  let stored: { date: string; bytes: number } | undefined;
  const soap = await soapService(
    (op, body) => {
      if (op.startsWith('ParcelUpload') && ++uploads === 1) {
        // Taken, then the answer lost.
        stored = { date: new Date(Date.now() + stampOffsetMs).toISOString(), bytes: INVOICE.length };
        return DROP;
      }
      if (op === 'ParcelOutBoxArchiveEx') {
        const at = (tag: string): number => Date.parse(new RegExp(`<(?:\\w+:)?${tag}>([^<]+)<`).exec(body)?.[1] ?? '');
        const created = stored ? Date.parse(stored.date) : NaN;
        const rows =
          stored && created >= at('BeginDate') && created <= at('EndDate')
            ? `<ParcelIDInfo><ParcelID>9000001</ParcelID><ParcelBytes>${stored.bytes}</ParcelBytes><ParcelDate>${stored.date}</ParcelDate>` +
              `<MailboxIDFrom>1001</MailboxIDFrom><FileName>invoice-810.x12</FileName><StatusCode>OutBoxArchived</StatusCode></ParcelIDInfo>`
            : '';
        return `<${op}Result><Count>${rows ? 1 : 0}</Count><TotalRecords>${rows ? 1 : 0}</TotalRecords><ParcelIDInfoList>${rows}</ParcelIDInfoList></${op}Result>`;
      }
      if (op.startsWith('ParcelOutBox'))
        return `<${op}Result><Count>0</Count><TotalRecords>0</TotalRecords><ParcelIDInfoList/></${op}Result>`;
      return undefined;
    },
    { dateOffsetMs },
  );
  cleanups.push(() => soap.close());
  const w = invoiceDropWorld({ api: { baseUrl: soap.url, protocol: 'soap', apiKey: 'date-key-8Rw3' }, once: { drainTimeout: '20s' } });
  cleanups.push(() => w.cleanup());
  const child = startCli(['once', '-c', w.configFile], {}, w.dir);
  cleanups.push(() => child.kill('SIGKILL'));
  await child.exited;
  return { uploads, w };
}

describe('a SOAP service whose Date header reads five years ahead of its parcel stamps', () => {
  it('an upload whose answer was lost is not sent again: errorDir after maxAttempts, naming the clock', async () => {
    const { uploads, w } = await lostAnswer(FIVE_YEARS_MS);
    expect(uploads).toBe(1);
    expect(fs.readFileSync(path.join(w.error, 'invoice-810.x12.error.json'), 'utf8')).toMatch(/clock/);
  }, 90_000);
});

describe('a SOAP service whose clock or Date header is off by hours', () => {
  it('a Date 6 h ahead of the stamps: not sent again, errorDir naming the clocks', async () => {
    const { uploads, w } = await lostAnswer(6 * HOUR_MS);
    expect(uploads).toBe(1);
    expect(fs.existsSync(path.join(w.sent, 'invoice-810.x12'))).toBe(false);
    expect(fs.readFileSync(path.join(w.error, 'invoice-810.x12.error.json'), 'utf8')).toMatch(/clock/);
  }, 90_000);

  it('a Date 1 h ahead of the stamps: found under our clock and adopted, not sent again', async () => {
    const { uploads, w } = await lostAnswer(HOUR_MS);
    expect(uploads).toBe(1);
    expect(fs.readdirSync(w.sent)).toEqual(['invoice-810.x12']);
  }, 90_000);

  it('a service 15 min ahead, its stamps too: the parcel is inside the list asked for, adopted, not sent again', async () => {
    const { uploads, w } = await lostAnswer(15 * 60_000, 15 * 60_000);
    expect(uploads).toBe(1);
    expect(fs.readdirSync(w.sent)).toEqual(['invoice-810.x12']);
  }, 90_000);
});
