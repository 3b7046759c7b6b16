// An independent, deliberately simple reading of X12/EDIFACT files for the corpus tests: it shares
// no code with packages/protocol/src/edi, holds whole files in memory and splits them with String#split. It is the
// oracle the envelope check and the demo partner's acknowledgments are compared with.

export interface OracleSet {
  id: string;
  control: string;
  /** EDIFACT: the UNH S009 composite as sent. */
  identifier: string;
  segments: number;
  trailerCount: string | undefined;
  trailerControl: string | undefined;
}

export interface OracleGroup {
  functionalId: string;
  control: string;
  version: string;
  explicit: boolean;
  sets: OracleSet[];
  trailerCount: string | undefined;
  trailerControl: string | undefined;
}

export interface OracleInterchange {
  standard: 'X12' | 'EDIFACT';
  /** The header elements (ISA01… / UNB elements), as sent. */
  header: string[];
  control: string;
  groups: OracleGroup[];
  trailer: string[] | undefined;
}

const stripBom = (t: string): string => (t.startsWith('\u00ef\u00bb\u00bf') ? t.slice(3) : t);

function x12(text: string, at: number): { ix: OracleInterchange; end: number } {
  const el = text[at + 3] as string;
  const term = text[at + 105] as string;
  const ix: OracleInterchange = {
    standard: 'X12',
    header: text.slice(at, at + 105).split(el),
    control: '',
    groups: [],
    trailer: undefined,
  };
  ix.control = (ix.header[13] ?? '').trim();
  let p = at + 106;
  let group: OracleGroup | undefined;
  let set: OracleSet | undefined;
  while (p < text.length) {
    let e = text.indexOf(term, p);
    if (e === -1) e = text.length;
    const f = text
      .slice(p, e)
      .trim()
      .split(el)
      .map((x) => x.trim());
    p = e + 1;
    const tag = f[0];
    if (tag === 'GS') {
      group = {
        functionalId: f[1] ?? '',
        control: f[6] ?? '',
        version: f[8] ?? '',
        explicit: true,
        sets: [],
        trailerCount: undefined,
        trailerControl: undefined,
      };
      ix.groups.push(group);
    } else if (tag === 'ST') {
      set = { id: f[1] ?? '', control: f[2] ?? '', identifier: '', segments: 1, trailerCount: undefined, trailerControl: undefined };
      group?.sets.push(set);
    } else if (tag === 'SE' && set) {
      set.segments++;
      set.trailerCount = f[1];
      set.trailerControl = f[2];
      set = undefined;
    } else if (tag === 'GE' && group) {
      group.trailerCount = f[1];
      group.trailerControl = f[2];
      group = undefined;
    } else if (tag === 'IEA') {
      ix.trailer = f;
      break;
    } else if (set) set.segments++;
  }
  return { ix, end: p };
}

/** Splits on `term` not preceded by an odd number of `rel`. */
function splitReleased(text: string, term: string, rel: string): { parts: string[]; ends: number[] } {
  const parts: string[] = [];
  const ends: number[] = [];
  let cur = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (rel && c === rel && i + 1 < text.length) {
      cur += c + (text[i + 1] as string);
      i++;
    } else if (c === term) {
      parts.push(cur);
      ends.push(i + 1);
      cur = '';
    } else cur += c;
  }
  if (cur.trim() !== '') {
    parts.push(cur);
    ends.push(text.length);
  }
  return { parts, ends };
}

function edifact(text: string, at: number): { ix: OracleInterchange; end: number } {
  let el = '+';
  let term = "'";
  let rel = '?';
  let p = at;
  if (text.startsWith('UNA', at)) {
    el = text[at + 4] as string;
    rel = text[at + 6] === ' ' ? '' : (text[at + 6] as string);
    term = text[at + 8] as string;
    p = at + 9;
  }
  const rest = text.slice(p);
  const { parts, ends } = splitReleased(rest, term, rel);
  const ix: OracleInterchange = { standard: 'EDIFACT', header: [], control: '', groups: [], trailer: undefined };
  let group: OracleGroup | undefined;
  let set: OracleSet | undefined;
  let end = text.length;
  for (let i = 0; i < parts.length; i++) {
    const f = (parts[i] as string).trim().split(el);
    const tag = f[0];
    if (tag === 'UNB') {
      ix.header = f;
      ix.control = (f[5] ?? '').trim();
    } else if (tag === 'UNG') {
      group = {
        functionalId: f[1] ?? '',
        control: f[5] ?? '',
        version: f[7] ?? '',
        explicit: true,
        sets: [],
        trailerCount: undefined,
        trailerControl: undefined,
      };
      ix.groups.push(group);
    } else if (tag === 'UNH') {
      if (!group) {
        group = {
          functionalId: '',
          control: '',
          version: '',
          explicit: false,
          sets: [],
          trailerCount: undefined,
          trailerControl: undefined,
        };
        ix.groups.push(group);
      }
      set = {
        id: (f[2] ?? '').split(':')[0] ?? '',
        control: f[1] ?? '',
        identifier: f[2] ?? '',
        segments: 1,
        trailerCount: undefined,
        trailerControl: undefined,
      };
      group.sets.push(set);
    } else if (tag === 'UNT' && set) {
      set.segments++;
      set.trailerCount = f[1];
      set.trailerControl = f[2];
      set = undefined;
    } else if (tag === 'UNE' && group) {
      group.trailerCount = f[1];
      group.trailerControl = f[2];
      group = undefined;
    } else if (tag === 'UNZ') {
      ix.trailer = f;
      end = p + (ends[i] as number);
      break;
    } else if (set) set.segments++;
  }
  return { ix, end };
}

/** The interchanges of a whole file, as far as they can be read. */
export function oracleInterchanges(raw: Buffer): OracleInterchange[] {
  const text = stripBom(raw.toString('latin1'));
  const out: OracleInterchange[] = [];
  let p = 0;
  for (;;) {
    while (p < text.length && /[\s]/.test(text[p] as string)) p++;
    if (text.startsWith('\u00ef\u00bb\u00bf', p)) p += 3;
    while (p < text.length && /[\s]/.test(text[p] as string)) p++;
    let r: { ix: OracleInterchange; end: number } | undefined;
    if (text.startsWith('ISA', p)) r = x12(text, p);
    else if (text.startsWith('UNA', p) || text.startsWith('UNB', p)) r = edifact(text, p);
    if (!r) return out;
    out.push(r.ix);
    p = r.end;
  }
}

const num = (v: string | undefined): number => (v !== undefined && /^\d+$/.test(v.trim()) ? Number(v) : Number.NaN);

/** Whether a set's trailer agrees with what was read. */
export const setOk = (s: OracleSet): boolean => num(s.trailerCount) === s.segments && (s.trailerControl ?? '').trim() === s.control.trim();
/** Whether a group's trailer agrees with what was read (explicit groups only). */
export const groupOk = (g: OracleGroup): boolean =>
  !g.explicit || (num(g.trailerCount) === g.sets.length && (g.trailerControl ?? '').trim() === g.control.trim());

/** Every count/reference problem of an interchange (empty when all trailers agree). */
export function countProblems(ix: OracleInterchange): string[] {
  const out: string[] = [];
  for (const g of ix.groups) {
    if (!groupOk(g)) out.push(`group ${g.control}`);
    for (const s of g.sets) if (!setOk(s)) out.push(`set ${s.control}`);
  }
  const explicit = ix.groups.filter((g) => g.explicit).length;
  const expected = ix.standard === 'X12' || explicit > 0 ? explicit : ix.groups.reduce((n, g) => n + g.sets.length, 0);
  if (num(ix.trailer?.[1]) !== expected) out.push('interchange count');
  return out;
}
