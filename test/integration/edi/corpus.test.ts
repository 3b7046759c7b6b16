// The envelope check and the demo partner's acknowledgments against a corpus of real X12/EDIFACT
// files from independent open-source EDI projects (plus copies cut the way exports get truncated).
// Its manifest says, per file, whether the envelope is intact. The corpus is data kept outside the
// repository: GRIDSYNC_EDI_CORPUS names its directory (.ci/run sets it to where the CI machine keeps
// it); without it these tests skip with a notice.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { acknowledgment, parseInterchanges } from '../../../packages/emulator/src/edi.js';
import { validateEnvelope, validateEnvelopeFile } from '../../../src/outbound/checks.js';
import { countProblems, groupOk, oracleInterchanges, setOk, type OracleInterchange } from '../../helpers/edi-oracle.js';
import { prerequisite } from '../../helpers/require-tool.js';

// 470 real X12/EDIFACT files from ten open-source EDI projects, with a manifest of where each came from.
const corpusDir = process.env.GRIDSYNC_EDI_CORPUS ?? '';
const present = prerequisite(
  `the EDI corpus (GRIDSYNC_EDI_CORPUS=${corpusDir || 'unset'})`,
  corpusDir !== '' && fs.existsSync(path.join(corpusDir, 'manifest.json')),
  'the envelope checks are not run against real interchanges',
);

interface Entry {
  file: string;
  expected: 'valid' | 'lenient' | 'invalid' | 'other';
  standard: string;
  origin: string;
  note?: string;
  flags?: { interchanges?: number };
}

const manifest: Entry[] = present ? (JSON.parse(fs.readFileSync(path.join(corpusDir, 'manifest.json'), 'utf8')) as Entry[]) : [];
const bytesOf = (e: Entry): Buffer => fs.readFileSync(path.join(corpusDir, 'files', e.file));
const intact = (e: Entry): boolean => e.expected === 'valid' || e.expected === 'lenient';

/** What a reason must say for the manifest's description of the damage. */
function sensible(note: string, reason: string): boolean {
  const isa = /^(ISA\d\d) does not start at column (\d+)/.exec(note);
  if (isa) return reason.includes(`${isa[1]} does not start at offset ${isa[2]}`) && reason.includes('(ISA)');
  // The check stops at the first problem: in a few of these files the header itself is already
  // wrong (a separator saved as a multi-byte UTF-8 character, a UNB without sender), which is
  // what the reason names then.
  if (/not closed by/.test(note))
    return /not closed by (an IEA|a UNZ)/.test(reason) || /segment \d+ \((ISA|UNB)\): .*(multi-byte UTF-8|is empty)/.test(reason);
  if (/^IEA02 .* != ISA13/.test(note)) return /\(IEA\): IEA02 '.*' does not match ISA13/.test(reason);
  if (/^UNZ 0020 .* != UNB 0020/.test(note)) return /\(UNZ\): UNZ 0020 '.*' does not match UNB 0020/.test(reason);
  if (/no interchange header|not X12\/EDIFACT|not an X12/.test(note))
    return /not an X12 \(ISA\) or EDIFACT \(UNA\/UNB\) interchange/.test(reason);
  if (/UNB has no sender, recipient or interchange control reference/.test(note))
    return /\(UNB\): UNB (0020|S002|S003) .* is empty/.test(reason);
  if (/separators are not distinct/.test(note)) return /\(ISA\): .*(separator|multi-byte)/.test(reason);
  // anything else: the reason still names where it is
  return /^(interchange \d+, )?segment \d+ \(/.test(reason);
}

describe.skipIf(!present)('EDI corpus', () => {
  it('envelope level: every intact file accepted, every broken one rejected with a reason that says what the manifest says', async () => {
    let falseRejects = 0;
    let falseAccepts = 0;
    let vague = 0;
    const lines: string[] = [];
    for (const e of manifest) {
      const v = validateEnvelope(bytesOf(e), { counts: false });
      if (intact(e) && !v.ok) {
        falseRejects++;
        lines.push(`false reject ${e.file}: ${v.reason}`);
      } else if (!intact(e) && v.ok) {
        falseAccepts++;
        lines.push(`false accept ${e.file} (${e.note ?? ''})`);
      } else if (!v.ok && !sensible(e.note ?? '', v.reason)) {
        vague++;
        lines.push(`reason ${JSON.stringify(v.reason)} for ${e.file}, the manifest says ${JSON.stringify(e.note)}`);
      }
    }
    const intactCount = manifest.filter(intact).length;
    console.log(
      `EDI corpus, envelope level: ${manifest.length} files (${intactCount} intact, ${manifest.length - intactCount} broken or not EDI): ` +
        `${falseRejects} false rejects, ${falseAccepts} false accepts, ${vague} rejects whose reason disagrees with the manifest`,
    );
    for (const l of lines) console.log(`  ${l}`);
    expect(manifest.length).toBeGreaterThan(400);
    expect({ falseRejects, falseAccepts, vague }).toEqual({ falseRejects: 0, falseAccepts: 0, vague: 0 });
  });

  it('with the count checks (the default): intact files are accepted exactly when an independent reading finds every trailer count and reference right', () => {
    let falseRejects = 0;
    let falseAccepts = 0;
    let countRejects = 0;
    const lines: string[] = [];
    for (const e of manifest) {
      const bytes = bytesOf(e);
      const v = validateEnvelope(bytes, { counts: true });
      if (!intact(e)) {
        if (v.ok) falseAccepts++;
        continue;
      }
      const problems = oracleInterchanges(bytes).flatMap(countProblems);
      if (problems.length > 0) countRejects++;
      if (problems.length === 0 && !v.ok) {
        falseRejects++;
        lines.push(`false reject ${e.file}: ${v.reason}`);
      } else if (problems.length > 0 && v.ok) {
        falseAccepts++;
        lines.push(`false accept ${e.file}: the oracle finds ${problems.join(', ')}`);
      } else if (!v.ok && !/\((SE|GE|IEA|UNT|UNE|UNZ|ST|GS|UNH|UNG)\): .*(does not match|is not closed|without)/.test(v.reason)) {
        falseRejects++;
        lines.push(`reject ${e.file} for something else than a count: ${v.reason}`);
      }
    }
    console.log(
      `EDI corpus, with count checks: ${countRejects} intact files have a wrong trailer count or reference; ${falseRejects} false rejects, ${falseAccepts} false accepts`,
    );
    for (const l of lines) console.log(`  ${l}`);
    expect({ falseRejects, falseAccepts }).toEqual({ falseRejects: 0, falseAccepts: 0 });
  });

  it('streamed from disk, the verdict is the one given in memory (largest file timed)', async () => {
    const sorted = [...manifest].sort(
      (a, b) => fs.statSync(path.join(corpusDir, 'files', b.file)).size - fs.statSync(path.join(corpusDir, 'files', a.file)).size,
    );
    for (const e of sorted.slice(0, 20)) {
      const file = path.join(corpusDir, 'files', e.file);
      expect(await validateEnvelopeFile(file, { counts: true })).toEqual(validateEnvelope(bytesOf(e), { counts: true }));
    }
    const largest = sorted[0] as Entry;
    const file = path.join(corpusDir, 'files', largest.file);
    // counts off reads the whole file (with counts on, this one stops at its first wrong SE)
    const timed = async (counts: boolean): Promise<string> => {
      const t0 = process.hrtime.bigint();
      const v = await validateEnvelopeFile(file, { counts });
      return `${(Number(process.hrtime.bigint() - t0) / 1e6).toFixed(1)} ms (${v.ok ? 'accepted' : 'rejected'})`;
    };
    console.log(
      `EDI corpus, largest file ${largest.file} (${fs.statSync(file).size} bytes): streamed check, envelope only ${await timed(false)}, with counts ${await timed(true)}`,
    );
  });

  it('the demo partner answers every interchange of every intact file, and each answer matches its interchange', () => {
    const now = new Date('2026-11-22T12:34:00Z');
    let next = 1;
    let interchanges = 0;
    let answers = 0;
    let notAnswered = 0;
    const wrong: string[] = [];
    for (const e of manifest.filter(intact)) {
      const bytes = bytesOf(e);
      const read = parseInterchanges(bytes);
      const oracle = oracleInterchanges(bytes);
      const expectedCount = e.flags?.interchanges ?? oracle.length;
      if (read.length !== expectedCount || oracle.length !== expectedCount) {
        wrong.push(`${e.file}: ${read.length} interchanges read, the manifest says ${expectedCount}, the oracle ${oracle.length}`);
        continue;
      }
      read.forEach((ix, i) => {
        interchanges++;
        const src = oracle[i] as OracleInterchange;
        const ack = acknowledgment(ix, () => next++, now);
        const problems = src.standard === 'X12' ? check997(src, ack?.content) : checkContrl(src, ack?.content);
        if (ack) answers++;
        else notAnswered++;
        for (const p of problems) wrong.push(`${e.file} interchange ${i + 1}: ${p}`);
      });
    }
    console.log(
      `EDI corpus, demo partner: ${interchanges} interchanges, ${answers} acknowledgments, ${notAnswered} left unanswered (acknowledgments themselves), ${wrong.length} mismatches`,
    );
    for (const w of wrong.slice(0, 40)) console.log(`  ${w}`);
    expect(answers).toBeGreaterThan(300);
    expect(wrong).toEqual([]);
  });
});

/** X12 997 against its source, read with split only. */
function check997(src: OracleInterchange, content: string | undefined): string[] {
  const groups = src.groups.filter((g) => g.functionalId !== 'FA');
  if (groups.length === 0) return content === undefined ? [] : ['an acknowledgment was answered'];
  if (content === undefined) return ['no 997'];
  const out: string[] = [];
  const segs = content
    .split('~')
    .filter((s) => s !== '')
    .map((s) => s.split('*'));
  const isa = content.slice(0, 106);
  const h = src.header.map((x) => x.trim());
  const a = isa
    .slice(0, 105)
    .split('*')
    .map((x) => x.trim());
  if (isa.length !== 106 || isa[105] !== '~') out.push('ISA not 106 characters');
  if (a[6] !== h[8] || a[8] !== h[6] || a[5] !== h[7] || a[7] !== h[5])
    out.push(`ISA parties not swapped: ${a[6]}→${a[8]} for ${h[6]}→${h[8]}`);
  if (a[15] !== h[15]) out.push(`ISA15 ${a[15]} for ${h[15]}`);
  if (a[12] !== h[12]) out.push(`ISA12 ${a[12]} for ${h[12]}`);
  // walk the 997s in order, one per source group
  const sets997: string[][][] = [];
  const fa: { version: string; sets: number; ge: string[] | undefined }[] = [];
  let cur: string[][] | undefined;
  for (const f of segs) {
    if (f[0] === 'GS') fa.push({ version: f[8] ?? '', sets: 0, ge: undefined });
    if (f[0] === 'ST') {
      cur = [f];
      sets997.push(cur);
      (fa.at(-1) as { sets: number }).sets++;
    } else if (cur) cur.push(f);
    if (f[0] === 'SE') {
      if (Number(f[1]) !== cur?.length) out.push(`997 SE01 ${f[1]} for ${cur?.length} segments`);
      cur = undefined;
    }
    if (f[0] === 'GE') (fa.at(-1) as { ge: string[] | undefined }).ge = f;
  }
  for (const g of fa) if (Number(g.ge?.[1]) !== g.sets) out.push(`FA GE01 ${g.ge?.[1]} for ${g.sets} sets`);
  const iea = segs.at(-1) as string[];
  if (iea[0] !== 'IEA' || Number(iea[1]) !== fa.length || iea[2] !== a[13]) out.push(`IEA ${iea.join('*')}`);
  // FA groups come per version, in the order of first appearance; the 997s follow the source groups within each
  const byVersion = [...new Set(groups.map((g) => g.version))];
  const ordered = byVersion.flatMap((v) => groups.filter((g) => g.version === v));
  if (fa.map((g) => g.version).join(',') !== byVersion.join(','))
    out.push(`GS08 ${fa.map((g) => g.version).join(',')} for versions ${byVersion.join(',')}`);
  if (sets997.length !== ordered.length) return [...out, `${sets997.length} 997s for ${ordered.length} groups`];
  ordered.forEach((g, k) => {
    const s = sets997[k] as string[][];
    const ak1 = s.find((f) => f[0] === 'AK1');
    if (ak1?.[1] !== g.functionalId || ak1[2] !== g.control.trim()) out.push(`AK1 ${ak1?.join('*')} for GS ${g.functionalId} ${g.control}`);
    const ak2 = s.filter((f) => f[0] === 'AK2').map((f) => `${f[1]}/${f[2]}`);
    const sets = g.sets.map((x) => `${x.id}/${x.control}`);
    if (ak2.join(',') !== sets.join(',')) out.push(`AK2 ${ak2.join(',')} for sets ${sets.join(',')}`);
    const ak5 = s.filter((f) => f[0] === 'AK5').map((f) => f[1]);
    const want5 = g.sets.map((x) => (setOk(x) ? 'A' : 'R'));
    if (ak5.join(',') !== want5.join(',')) out.push(`AK5 ${ak5.join(',')} for ${want5.join(',')}`);
    const ak9 = s.find((f) => f[0] === 'AK9') ?? [];
    const accepted = want5.filter((x) => x === 'A').length;
    const declared = /^\d+$/.test(g.trailerCount ?? '') ? Number(g.trailerCount) : g.sets.length;
    const status = !groupOk(g) ? 'R' : accepted === g.sets.length ? 'A' : accepted === 0 ? 'R' : 'P';
    const want9 = [status, String(declared), String(g.sets.length), String(accepted)];
    if (ak9.slice(1, 5).join('*') !== want9.join('*')) out.push(`AK9 ${ak9.join('*')} for ${want9.join('*')}`);
  });
  return out;
}

/** CONTRL against its source, read with split only. */
function checkContrl(src: OracleInterchange, content: string | undefined): string[] {
  const messages = src.groups.flatMap((g) => g.sets);
  if (messages.length > 0 && messages.every((m) => m.id === 'CONTRL')) return content === undefined ? [] : ['a CONTRL was answered'];
  if (content === undefined) return ['no CONTRL'];
  const out: string[] = [];
  if (!content.startsWith("UNA:+.? '")) out.push('no UNA');
  const segs = content
    .slice(9)
    .split("'")
    .filter((s) => s !== '')
    .map((s) => s.split('+'));
  const unb = segs[0] as string[];
  const [syntaxId = '', syntaxVersion = ''] = (src.header[1] ?? '').split(':');
  if (unb[1] !== `${syntaxId.trim()}:${syntaxVersion.trim()}`) out.push(`UNB syntax ${unb[1]} for ${src.header[1]}`);
  if ((unb[11] ?? '') !== (src.header[11] ?? '').trim()) out.push(`UNB test indicator ${unb[11]} for ${src.header[11]}`);
  const unh = segs.find((f) => f[0] === 'UNH');
  const wantType = Number(syntaxVersion) >= 4 ? 'CONTRL:4:1:UN' : 'CONTRL:D:3:UN';
  if (unh?.[2] !== wantType) out.push(`UNH ${unh?.join('+')} for syntax ${syntaxVersion}`);
  const uci = segs.find((f) => f[0] === 'UCI');
  if (uci?.[1] !== src.control) out.push(`UCI ${uci?.join('+')} for UNB 0020 ${src.control}`);
  const ucm = segs.filter((f) => f[0] === 'UCM');
  if (ucm.map((f) => f[1]).join(',') !== messages.map((m) => m.control).join(','))
    out.push(`UCM refs ${ucm.map((f) => f[1]).join(',')} for ${messages.map((m) => m.control).join(',')}`);
  if (ucm.map((f) => (f[2] ?? '').split(':')[0]).join(',') !== messages.map((m) => m.id).join(',')) out.push('UCM message types differ');
  const want = src.groups.flatMap((g) => g.sets.map((m) => (setOk(m) && groupOk(g) ? '7' : '4')));
  if (ucm.map((f) => f[3]).join(',') !== want.join(',')) out.push(`UCM actions ${ucm.map((f) => f[3]).join(',')} for ${want.join(',')}`);
  const unt = segs.find((f) => f[0] === 'UNT');
  if (Number(unt?.[1]) !== segs.length - 2) out.push(`UNT ${unt?.join('+')} for ${segs.length - 2} segments`);
  const unz = segs.at(-1) as string[];
  if (unz[0] !== 'UNZ' || unz[1] !== '1' || unz[2] !== unb[5]) out.push(`UNZ ${unz.join('+')}`);
  return out;
}
