// Hostile round 3: a service whose lists carry records of another mailbox (a filter it ignores,
// an account that sees several mailboxes, a proxy that mixes tenants' answers). Each record says
// whose it is (REST `mailboxId`; SOAP `MailboxIDTo` in an inbox, `MailboxIDFrom` in an outbox).
// Another mailbox's parcel must never be placed in this mailbox's inbox and confirmed away from
// its owner, and another mailbox's upload must never be taken for ours when the answer to our
// upload was lost (our file archived as sent, never delivered). The built CLI runs against a
// scripted service (not our emulator), over REST and over SOAP.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { onceChild } from '../../helpers/daemon-child.js';
import { makeDaemonWorld } from '../../helpers/daemon-config.js';
import { INVOICE, invoiceDropWorld } from '../../helpers/invoice-drop.js';
import { startScriptedService, wireJson } from '../../helpers/scripted-service.js';
import { soapService } from '../../helpers/scripted-soap.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('a REST service listing records of another mailbox', () => {
  it('a pending parcel of mailbox 2002 listed for 1001 is neither placed nor confirmed; the parcel of 1001 is', async () => {
    const svc = await startScriptedService({ apiKey: 'foreign-key-7Hq2' });
    cleanups.push(() => svc.close());
    const own = svc.addInbound('own.x12', 'ISA*own~');
    const foreign = svc.addInbound('theirs.x12', 'ISA*theirs~');
    svc.variants.record = (r, p) => (p.parcelId === foreign.parcelId ? { ...r, mailboxId: 2002 } : r);
    const w = makeDaemonWorld({ api: { baseUrl: svc.url, protocol: 'rest', apiKey: svc.apiKey } }, { outbox: undefined });
    cleanups.push(() => w.cleanup());
    await onceChild(w.configFile);
    expect(fs.readdirSync(w.inbox)).toEqual(['own.x12']);
    const touched = svc.requests.filter((r) => r.path === '/v2/parcels/download' || r.path === '/v2/parcels/confirm');
    expect(touched.filter((r) => String(r.body.parcelId) === String(foreign.parcelId))).toEqual([]);
    expect(own.status).toBe('InBoxTransferred');
    expect(foreign.status).toBe('InBoxReady');
  });

  it("an upload whose answer was lost is not matched with another mailbox's parcel of the same name and size", async () => {
    const svc = await startScriptedService({ apiKey: 'foreign-key-7Hq2' });
    cleanups.push(() => svc.close());
    let uploads = 0;
    svc.variants.fault = (req, res) => {
      // The first upload is read whole and its answer lost: the outcome is unknown, nothing stored.
      if (req.path === '/v2/parcels/upload' && ++uploads === 1) {
        res.socket?.destroy();
        return true;
      }
      if (req.path !== '/v2/parcels/outbox-list') return false;
      const record = {
        parcelId: 8_000_001,
        mailboxId: 2002,
        networkId: 1,
        fileName: 'invoice-810.x12',
        bytes: INVOICE.length,
        status: 'outboxPending',
        created: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      };
      res.writeHead(200, { 'content-type': 'application/json', date: new Date().toUTCString() });
      res.end(wireJson({ success: true, data: [record], errorCode: '', message: '' }));
      return true;
    };
    const w = invoiceDropWorld({ api: { baseUrl: svc.url, protocol: 'rest', apiKey: svc.apiKey } });
    cleanups.push(() => w.cleanup());
    await onceChild(w.configFile);
    expect(uploads).toBeGreaterThanOrEqual(1);
    const delivered = svc.parcels.some((p) => p.direction === 'out' && p.fileName === 'invoice-810.x12');
    const archived = fs.existsSync(path.join(w.sent, 'invoice-810.x12'));
    // Archived as sent only if the service holds it: never on the strength of mailbox 2002's parcel.
    expect({ archived, delivered }).not.toEqual({ archived: true, delivered: false });
    // Here the list can never tell: errorDir, with the reason naming the other mailbox's record.
    expect(fs.readFileSync(path.join(w.error, 'invoice-810.x12.error.json'), 'utf8')).toContain('a record of mailbox 2002');
  });
});

const parcelXml = (id: number, name: string, bytes: number, to: number): string =>
  `<ParcelIDInfo><ParcelID>${id}</ParcelID><ParcelBytes>${bytes}</ParcelBytes><ParcelDate>2026-05-07T08:00:00Z</ParcelDate>` +
  `<MailboxIDFrom>0</MailboxIDFrom><MailboxIDTo>${to}</MailboxIDTo><FileName>${name}</FileName><StatusCode>InBoxReady</StatusCode></ParcelIDInfo>`;

describe('a SOAP service listing records of another mailbox', () => {
  it('a pending parcel whose MailboxIDTo is 2002, listed for 1001, is neither downloaded nor confirmed', async () => {
    const contents = new Map([
      [71, Buffer.from('ISA*soap-own~')],
      [72, Buffer.from('ISA*theirs~')],
    ]);
    const ready = new Set([71, 72]);
    const soap = await soapService((operation, body) => {
      const id = Number(/<(?:\w+:)?ParcelID>(\d+)</.exec(body)?.[1]);
      if (operation === 'ParcelInBoxEx')
        return (
          `<ParcelInBoxExResult><Count>${ready.size}</Count><TotalRecords>${ready.size}</TotalRecords><ParcelIDInfoList>` +
          (ready.has(71) ? parcelXml(71, 'own.x12', 13, 1001) : '') +
          (ready.has(72) ? parcelXml(72, 'theirs.x12', 11, 2002) : '') +
          `</ParcelIDInfoList></ParcelInBoxExResult>`
        );
      const content = contents.get(id);
      if (operation === 'ParcelDownload' && content)
        return `<ParcelDownloadResult><ParcelID>${id}</ParcelID><Bytes>${content.length}</Bytes><ContentBase64String>${content.toString('base64')}</ContentBase64String></ParcelDownloadResult>`;
      if (operation === 'ParcelDownloadConfirm') {
        ready.delete(id);
        return '<ParcelDownloadConfirmResult>true</ParcelDownloadConfirmResult>';
      }
      return undefined;
    });
    cleanups.push(() => soap.close());
    const w = makeDaemonWorld({ api: { baseUrl: soap.url, protocol: 'soap', apiKey: 'foreign-key-7Hq2' } }, { outbox: undefined });
    cleanups.push(() => w.cleanup());
    await onceChild(w.configFile);
    expect(fs.readdirSync(w.inbox)).toEqual(['own.x12']);
    expect([...ready]).toEqual([72]);
  });
});
