// The SOAP XML layer from the outside: hand-written messages with other prefixes, unknown elements,
// every date form and 64-bit ids; streamed content that arrives in tiny pieces; hostile input.
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { operationByName, SOAP11_ENV, SOAP_NS } from '../../../packages/protocol/src/soap/schema.js';
import { buildWsdl } from '../../../packages/protocol/src/soap/wsdl.js';
import {
  decodeFields,
  decodeValue,
  parseDate,
  readFault,
  readXml,
  soapPayload,
  writeFault,
  writeRequest,
  writeResponse,
  isFault,
  child,
} from '../../../packages/protocol/src/soap/xml.js';

const pieces = (s: string, n: number): Readable =>
  Readable.from(Array.from({ length: Math.ceil(s.length / n) }, (_, i) => Buffer.from(s.slice(i * n, (i + 1) * n))));

describe('SOAP XML', () => {
  it('reads a request written with another prefix, unknown children ignored, missing value types as zero', async () => {
    const xml = `<?xml version="1.0"?><e:Envelope xmlns:e="${SOAP11_ENV}"><e:Body><g:ParcelInBoxEx xmlns:g="${SOAP_NS}"><g:SessionID>abc &amp; d</g:SessionID><g:Bogus>1</g:Bogus><g:MailboxID>1001</g:MailboxID></g:ParcelInBoxEx></e:Body></e:Envelope>`;
    const msg = soapPayload(await readXml(pieces(xml, 7)));
    expect(msg.version).toBe('1.1');
    expect(msg.payload.name).toBe('ParcelInBoxEx');
    const op = operationByName('ParcelInBoxEx')!;
    expect(decodeFields(msg.payload, op.params, 'x', { fillDefaults: true })).toEqual({
      SessionID: 'abc & d',
      NetworkID: 0,
      MailboxID: 1001,
      GridIDFrom: 0,
      GridIDTo: 0,
    });
  });

  it('writes a response in element order with every required element, and reads it back with 64-bit ids exact', async () => {
    const op = operationByName('ParcelInfo')!;
    const xml = writeResponse(op, { ParcelID: '9223372036854775807', FileName: 'a<b>.edi', ParcelBytes: 5 }, '1.1');
    const names = [...xml.matchAll(/<(\w+)>/g)].map((m) => m[1]);
    expect(names.slice(0, 4)).toEqual(['ParcelInfoResult', 'ParcelBytes', 'ParcelDate', 'ActualBytes']);
    expect(names.at(-1)).toBe('ParcelID');
    expect(xml).toContain('<ParcelDate>0001-01-01T00:00:00</ParcelDate>');
    expect(xml).not.toContain('<NetworkNameFrom>');
    const msg = soapPayload(await readXml(pieces(xml, 3)));
    const result = child(msg.payload, 'ParcelInfoResult')!;
    const v = decodeValue(result, 'ParcelIDInfo', 'r') as Record<string, unknown>;
    expect(v.ParcelID).toBe('9223372036854775807');
    expect(v.FileName).toBe('a<b>.edi');
    expect(v.ParcelDate).toBeNull();
  });

  it('streams content text in pieces, never into the tree', async () => {
    const b64 = Buffer.alloc(300_000, 7).toString('base64');
    const xml = writeRequest(operationByName('ParcelUpload')!, { SessionID: 's', FileName: 'f', Bytes: 300_000, Content: b64 });
    const got: string[] = [];
    const root = await readXml(pieces(xml, 4096), { streamElements: new Set(['Content']), onStream: (t) => void got.push(t) });
    expect(got.length).toBeGreaterThan(10);
    expect(got.join('')).toBe(b64);
    const content = child(soapPayload(root).payload, 'Content')!;
    expect(content.streamed).toBe(true);
    expect(content.text).toBe('');
  });

  it('streamed text is exact whichever way it is cut: CR LF, entities and CDATA inside, any chunk size', async () => {
    const b64 = Buffer.alloc(100_000, 9).toString('base64');
    const lines = b64.match(/.{1,76}/g)!.join('\r\n');
    const body = `${lines.slice(0, 5000)}&#65;${lines.slice(5000, 9000)}<![CDATA[QUJD]]>${lines.slice(9000)}`;
    const xml = `<e:Envelope xmlns:e="${SOAP11_ENV}"><e:Body><g:ParcelUpload xmlns:g="${SOAP_NS}"><g:Content>${body}</g:Content><g:Bytes>1</g:Bytes></g:ParcelUpload></e:Body></e:Envelope>`;
    const expected = `${lines.slice(0, 5000)}A${lines.slice(5000, 9000)}QUJD${lines.slice(9000)}`.replace(/\r\n/g, '\n');
    for (const size of [1, 7, 4096, 65536]) {
      const got: string[] = [];
      const root = await readXml(pieces(xml, size), { streamElements: new Set(['Content']), onStream: (t) => void got.push(t) });
      expect(got.join('').replace(/\r\n/g, '\n'), `chunks of ${size}`).toBe(expected);
      expect(child(soapPayload(root).payload, 'Bytes')?.text).toBe('1');
    }
  });

  it('parses every date form and refuses bad numbers', () => {
    expect(parseDate('2026-05-07T08:00:00')).toBe(Date.UTC(2026, 4, 7, 8));
    expect(parseDate('2026-05-07T08:00:00.1234567Z')).toBe(Date.UTC(2026, 4, 7, 8, 0, 0, 123));
    expect(parseDate('2026-05-07T10:00:00+02:00')).toBe(Date.UTC(2026, 4, 7, 8));
    expect(parseDate('0001-01-01T00:00:00')).toBeNull();
    expect(() => decodeValue({ name: 'x', ns: '', text: '12x', children: [], nil: false, streamed: false }, 'int', 'x')).toThrow(
      /not an integer/,
    );
  });

  it('writes and reads faults of both versions with both detail elements', async () => {
    for (const v of ['1.1', '1.2'] as const) {
      const xml = writeFault(v, { faultCode: 'Client', message: 'Invalid SessionID', errorCode: 5, errorItem: 'SessionID' });
      expect(xml).toContain('<GridOSSOAPErrorCode xmlns="">5</GridOSSOAPErrorCode>');
      const msg = soapPayload(await readXml(pieces(xml, 11)));
      expect(isFault(msg)).toBe(true);
      expect(readFault(msg)).toMatchObject({ faultCode: 'Client', errorCode: 5, errorItem: 'SessionID', message: 'Invalid SessionID' });
    }
  });

  it('rejects malformed, truncated and endless input', async () => {
    await expect(readXml(pieces('<a><b></a>', 3))).rejects.toThrow();
    await expect(readXml(pieces(`<e:Envelope xmlns:e="${SOAP11_ENV}"><e:Body>`, 3))).rejects.toMatchObject({ truncated: true });
    await expect(readXml(pieces(`<a>${'x'.repeat(5000)}</a>`, 100), { maxText: 1000 })).rejects.toThrow(/characters of text/);
  });

  it('builds a WSDL naming every operation with its action, pointing at the given address', async () => {
    const wsdl = buildWsdl('http://127.0.0.1:1234/v4.1/prod/GridOS.asmx');
    const root = await readXml(Readable.from([wsdl]));
    expect(root.name).toBe('definitions');
    expect(wsdl).toContain('soapAction="https://os.grid.example/ParcelDownloadConfirm"');
    expect(wsdl).toContain('<soap:address location="http://127.0.0.1:1234/v4.1/prod/GridOS.asmx" />');
    expect(wsdl).toContain('<s:element minOccurs="1" maxOccurs="1" name="ParcelID" type="s:long" />');
  });
});
