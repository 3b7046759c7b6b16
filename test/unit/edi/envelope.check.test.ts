import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { validateEnvelope, validateEnvelopeFile } from '../../../src/outbound/checks.js';
import { edifact, x12 } from '../../helpers/edi.js';

const on = { counts: true };
const off = { counts: false };
const reason = (text: string, opts = on): string => {
  const v = validateEnvelope(text, opts);
  return v.ok ? 'ACCEPTED' : v.reason;
};

describe('envelope check', () => {
  it('accepts several interchanges with a BOM, blank lines and a UNA before each EDIFACT interchange', () => {
    const text = `\u00ef\u00bb\u00bf${x12(1)}\r\n\r\n${x12(2)}\n`;
    expect(validateEnvelope(text, on)).toEqual({ ok: true, standard: 'X12', interchanges: 2 });
    expect(validateEnvelope(`${edifact(1)}\n${edifact(2)}\n${edifact(3)}`, on)).toEqual({ ok: true, standard: 'EDIFACT', interchanges: 3 });
  });

  it('checks every interchange, not only the first ISA against the last IEA', () => {
    const middle = x12(2).replace('IEA*1*000000002', 'IEA*1*000000099');
    expect(reason(`${x12(1)}\n${middle}\n${x12(3)}`)).toBe(
      "interchange 2, segment 14 (IEA): IEA02 '000000099' does not match ISA13 '000000002'",
    );
    // cut inside its GS: the rest of that GS runs into the next ISA, whose IEA then closes interchange 2
    const cutThenNext = `${x12(1)}\n${x12(2).slice(0, 150)}\n${x12(3)}`;
    expect(reason(cutThenNext, off)).toBe("interchange 2, segment 15 (IEA): IEA02 '000000003' does not match ISA13 '000000002'");
    expect(reason(cutThenNext)).toMatch(/^interchange 2, /);
    const cutAfterSegment = `${x12(1)}\n${x12(2).slice(0, x12(2).indexOf('SE*'))}${x12(3)}`;
    expect(reason(cutAfterSegment)).toBe('interchange 2, segment 12 (ISA): ISA 000000002 is not closed by an IEA before the next ISA');
  });

  it('rejects empty control references even when UNB and UNZ agree', () => {
    expect(reason("UNB+UNOC:3+A:ZZ+B:ZZ+261122:1200+'UNH+1+ORDERS:D:96A:UN'UNT+2+1'UNZ+1+'")).toBe(
      'interchange 1, segment 1 (UNB): UNB 0020 (interchange control reference) is empty',
    );
  });

  it('treats a missing final terminator alike in X12 and EDIFACT: accepted when the trailer is whole, rejected when cut', () => {
    expect(reason(x12(5).slice(0, -1))).toBe('ACCEPTED');
    expect(reason(edifact(5).slice(0, -1))).toBe('ACCEPTED');
    expect(reason(x12(5).slice(0, -2))).toMatch(/IEA02 '00000000' does not match ISA13 '000000005'/);
    expect(reason(edifact(5).slice(0, -2))).toMatch(/UNZ 0020 '' does not match UNB 0020 '5'/);
  });

  it('names the truncated interchange and where the data ends', () => {
    const cut = x12(7).slice(0, x12(7).indexOf('SE*'));
    expect(reason(`${x12(6)}${cut}`)).toBe(
      'interchange 2, segment 11 (N1): ISA 000000007 is not closed by an IEA: the data ends after segment 11 (N1) — truncated interchange',
    );
    expect(reason('')).toMatch(/no interchange/);
    expect(reason(`${x12(1)}N1*ST*STRAY~`)).toBe('segment 8 (N1): segment N1 is outside an interchange (after the end of interchange 1)');
  });

  it('names the ISA when it is not 106 characters', () => {
    expect(reason(x12(1).replace('*00*          *00*', '*00*     *00*'))).toBe(
      'interchange 1, segment 1 (ISA): the ISA is not 106 characters of fixed-width elements: ISA03 does not start at offset 18',
    );
  });

  it('checks IEA01/UNZ01 and the group and set counts unless told not to', () => {
    const cases: [string, RegExp][] = [
      [x12(1).replace('IEA*1*', 'IEA*2*'), /segment 7 \(IEA\): IEA01 '2' does not match the 1 functional groups read/],
      [x12(1).replace('GE*1*', 'GE*3*'), /segment 6 \(GE\): GE01 '3' does not match the 1 transaction sets of GS 1/],
      [x12(1).replace('GE*1*1~', 'GE*1*2~'), /GE02 '2' does not match GS06 '1'/],
      [x12(1).replace('SE*3*', 'SE*9*'), /segment 5 \(SE\): SE01 '9' does not match the 3 segments of ST 0001 \(810\)/],
      [x12(1).replace('SE*3*0001', 'SE*3*0002'), /SE02 '0002' does not match ST02 '0001'/],
      [x12(1).replace('SE*3*0001~', ''), /ST 0001 \(810\) is not closed by an SE before the GE/],
      [x12(1).replace(/GE\*1\*1~/, ''), /GS 1 is not closed by a GE before the IEA/],
      [edifact(1).replace('UNT+3+1', 'UNT+4+1'), /UNT 0074 '4' does not match the 3 segments of UNH 1 \(ORDERS\)/],
      [edifact(1).replace('UNZ+1+', 'UNZ+2+'), /UNZ 0036 '2' does not match the 1 messages read/],
    ];
    for (const [text, re] of cases) {
      expect(reason(text)).toMatch(re);
      expect(reason(text, off)).toBe('ACCEPTED');
    }
  });

  it('streams a file with the same verdicts as in memory, in chunks smaller than a segment', async () => {
    const big = `${x12(1)}\n`.repeat(1) + Array.from({ length: 3000 }, (_, i) => x12(i + 2, `N1*ST*${'X'.repeat(50)}`)).join('\n');
    const file = path.join(dir, 'big.x12');
    fs.writeFileSync(file, big, 'latin1');
    expect(await validateEnvelopeFile(file, on)).toEqual({ ok: true, standard: 'X12', interchanges: 3001 });
    fs.writeFileSync(file, big.slice(0, -40), 'latin1');
    const v = await validateEnvelopeFile(file, on);
    expect(v).toEqual(validateEnvelope(big.slice(0, -40), on));
    expect(v.ok ? '' : v.reason).toMatch(/^interchange 3001, .*truncated interchange$/);
  });
});

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-edi-check-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
