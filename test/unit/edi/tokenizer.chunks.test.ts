import { describe, expect, it } from 'vitest';
import { Tokenizer, type Segment, type TokenizerFailure } from '@gridsync/protocol/edi';
import { edifact, x12 } from '../../helpers/edi.js';

function tokenize(chunks: (string | Buffer)[], opts = {}): { segs: Segment[]; fails: TokenizerFailure[]; skipped: number } {
  const segs: Segment[] = [];
  const fails: TokenizerFailure[] = [];
  let skipped = 0;
  const t = new Tokenizer({ segment: (s) => segs.push(s), fail: (f) => fails.push(f), skip: () => skipped++ }, opts);
  for (const c of chunks) t.push(c);
  t.end();
  return { segs, fails, skipped };
}

/** Every way of cutting `text` in two, plus one byte at a time. */
function cuts(text: string): string[][] {
  const out: string[][] = [[text], text.split('')];
  for (let i = 1; i < text.length; i++) out.push([text.slice(0, i), text.slice(i)]);
  return out;
}

const view = (segs: Segment[]): string[] =>
  segs.map((s) => `${s.syntax}|${s.tag}|${s.text}|${s.separators.segment}|${s.index}|${s.terminated}`);

describe('EDI tokenizer', () => {
  const bom = '\u00ef\u00bb\u00bf';
  const mixed = [
    bom,
    x12(11).replaceAll('~', '~\r\n'),
    '\n\n',
    // the second interchange declares other separators in its own ISA
    x12(12).replaceAll('*', '|').replaceAll('~', '\n'),
    bom,
    "UNA:+.? '",
    "UNB+UNOC:3+A:ZZ+B:ZZ+261122:1200+7'UNH+1+ORDERS:D:96A:UN'FTX+AAI+++it?'s ?+ ok??'UNT+3+1'UNZ+1+7'",
    '\r\n  ',
    edifact(8).replace("UNA:+.? '", ''),
    '\n',
  ].join('');

  it('gives the same segments whatever the chunk boundaries (BOM, CRLF, newlines as terminators, UNA, release characters)', () => {
    const whole = tokenize([mixed]);
    expect(whole.fails).toEqual([]);
    expect(whole.segs.map((s) => s.tag)).toEqual([
      ...['ISA', 'GS', 'ST', 'N1', 'SE', 'GE', 'IEA'],
      ...['ISA', 'GS', 'ST', 'N1', 'SE', 'GE', 'IEA'],
      ...['UNA', 'UNB', 'UNH', 'FTX', 'UNT', 'UNZ'],
      ...['UNB', 'UNH', 'BGM', 'UNT', 'UNZ'],
    ]);
    // the released terminator and release character stay inside the segment
    expect(whole.segs.find((s) => s.tag === 'FTX')?.text).toBe("FTX+AAI+++it?'s ?+ ok??");
    expect(whole.segs[7]?.separators).toMatchObject({ element: '|', segment: '\n' });
    const expected = view(whole.segs);
    for (const parts of cuts(mixed)) expect(view(tokenize(parts).segs)).toEqual(expected);
    // bytes in, same result
    expect(view(tokenize([Buffer.from(mixed, 'latin1')]).segs)).toEqual(expected);
  });

  it('splits a chunk boundary between a release character and the character it releases', () => {
    const text = "UNB+UNOC:3+A+B+1:1+9'FTX+a?'b'UNZ+0+9'";
    const at = text.indexOf("?'") + 1;
    const { segs } = tokenize([text.slice(0, at), text.slice(at)]);
    expect(segs.map((s) => s.text)).toContain("FTX+a?'b");
  });

  it('reports a last segment without terminator as unterminated, in X12 and EDIFACT alike', () => {
    const a = tokenize([x12(1).slice(0, -1)]);
    const b = tokenize([edifact(1).slice(0, -1)]);
    expect(a.segs.at(-1)).toMatchObject({ tag: 'IEA', terminated: false });
    expect(b.segs.at(-1)).toMatchObject({ tag: 'UNZ', terminated: false });
  });

  it('names the ISA element that is out of place when the ISA is not 106 characters', () => {
    const shortSender = x12(1).replace('GRIDSYNC       ', 'GRIDSYNC');
    const { fails } = tokenize([shortSender]);
    expect(fails).toEqual([expect.objectContaining({ tag: 'ISA', interchange: 1, index: 1 })]);
    expect(fails[0]?.message).toMatch(/not 106 characters.*ISA07 does not start at offset 51/);
  });

  it('refuses what is not X12 or EDIFACT, naming how the data starts', () => {
    const { fails } = tokenize(['STX=ANA:1+SENDER']);
    expect(fails[0]).toMatchObject({ tag: 'STX', interchange: 1 });
    expect(fails[0]?.message).toMatch(/not an X12 \(ISA\) or EDIFACT \(UNA\/UNB\) interchange/);
  });

  it('gives up on a segment that never ends instead of buffering without limit', () => {
    const { fails } = tokenize([x12(1).slice(0, 106), 'N1*'.padEnd(5000, 'x')], { maxSegmentChars: 1000 });
    expect(fails[0]?.message).toMatch(/no segment terminator/);
  });

  it('skips a non-envelope segment longer than the limit without buffering it, released terminators included', () => {
    const long = `FTX+AAI+++${"ab?'cd".repeat(400)}`; // 2,800 bytes with released terminators
    const text = `UNB+UNOC:3+A+B+1:1+9'UNH+1+ORDERS:D:96A:UN'${long}'UNT+3+1'UNZ+1+9'`;
    // cut right after each release character once, and in 7-byte chunks
    const at = text.indexOf('?', 60) + 1;
    for (const parts of [[text.slice(0, at), text.slice(at)], text.match(/[\s\S]{1,7}/g) as string[]]) {
      const r = tokenize(parts, { envelopeOnly: true, maxSegmentChars: 100 });
      expect(r.fails).toEqual([]);
      expect(r.segs.map((s) => `${s.tag}${s.index}`)).toEqual(['UNB1', 'UNH2', 'UNT4', 'UNZ5']);
      expect(r.skipped).toBe(1);
    }
    expect(tokenize(text.match(/[\s\S]{1,7}/g) as string[], { maxSegmentChars: 100 }).fails[0]?.message).toMatch(/no segment terminator/);
  });

  it('in envelope-only mode builds only envelope segments and counts the others', () => {
    const { segs, skipped } = tokenize([x12(1, 'SV1*x~SBR*y~ITD*z~N1*w')], { envelopeOnly: true });
    expect(segs.map((s) => s.tag)).toEqual(['ISA', 'GS', 'ST', 'SE', 'GE', 'IEA']);
    expect(skipped).toBe(4);
    expect(segs.find((s) => s.tag === 'SE')?.index).toBe(8);
  });
});
