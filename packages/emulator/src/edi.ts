/**
 * What the emulator needs of X12 and EDIFACT, read with the protocol's EDI reader (the one the
 * daemon's outbound check uses): who sent an interchange to whom (routing when an upload names no
 * grid IDs), the interchanges inside a parcel, and the demo partner's answer to each — a 997 functional
 * acknowledgment (X12) or a CONTRL (EDIFACT) that says what was received and what was wrong.
 */
import {
  EnvelopeReader,
  splitElements,
  type FunctionalGroup,
  type Interchange as Envelope,
  type ProblemCode,
  type Separators,
  type TransactionSet,
} from '@gridsync/protocol/edi';

export interface Party {
  readonly qualifier: string;
  readonly id: string;
}

export interface Interchange {
  readonly standard: 'X12' | 'EDIFACT';
  readonly sender: Party;
  readonly receiver: Party;
  readonly controlNumber: string;
  /** The ISA segment (X12, 106 characters with its terminator) or the UNB segment (EDIFACT), as sent. */
  readonly header: string;
  /** First transaction set type (ST01 / UNH message type), when present. */
  readonly documentType: string | null;
  /** GS01 and GS06 of the first functional group (X12). */
  readonly group?: { readonly functionalId: string; readonly controlNumber: string };
  /** Groups, sets, counts and problems, as read. */
  readonly envelope: Envelope;
}

/** Whether content starts like an interchange (after a byte-order mark and whitespace). */
export function startsLikeEdi(head: Buffer): boolean {
  let i = head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? 3 : 0;
  while (i < head.length && (head[i] === 0x20 || head[i] === 0x09 || head[i] === 0x0a || head[i] === 0x0d)) i++;
  const tag = head.toString('latin1', i, i + 3);
  return tag === 'ISA' || tag === 'UNA' || tag === 'UNB';
}

/**
 * Every interchange in a parcel, complete or not (the last one of a head-only buffer is read as
 * far as it goes); reading stops at data that is not X12/EDIFACT. Text is taken as latin1.
 */
export function parseInterchanges(content: string | Buffer): Interchange[] {
  const out: Interchange[] = [];
  const reader = new EnvelopeReader({ detail: true, onInterchange: (ix) => out.push(view(ix)) });
  reader.push(content);
  reader.end();
  return out;
}

function view(ix: Envelope): Interchange {
  const first = ix.groups.find((g) => g.explicit);
  const firstSet = ix.groups.flatMap((g) => g.sets)[0];
  return {
    standard: ix.standard,
    sender: { qualifier: ix.sender.qualifier, id: ix.sender.id },
    receiver: { qualifier: ix.receiver.qualifier, id: ix.receiver.id },
    controlNumber: ix.control,
    header: ix.header,
    documentType: firstSet ? firstSet.id : null,
    ...(ix.standard === 'X12' && first ? { group: { functionalId: first.functionalId, controlNumber: first.control } } : {}),
    envelope: ix,
  };
}

const pad = (s: string, n: number): string => s.padEnd(n, ' ').slice(0, n);

function ediDate(now: Date): { yymmdd: string; ccyymmdd: string; hhmm: string } {
  const iso = now.toISOString();
  return {
    yymmdd: iso.slice(2, 4) + iso.slice(5, 7) + iso.slice(8, 10),
    ccyymmdd: iso.slice(0, 4) + iso.slice(5, 7) + iso.slice(8, 10),
    hhmm: iso.slice(11, 13) + iso.slice(14, 16),
  };
}

const codesOf = (problems: readonly { code: ProblemCode }[], table: Partial<Record<ProblemCode, string>>): string[] => [
  ...new Set(problems.map((p) => table[p.code]).filter((c): c is string => c !== undefined)),
];

/** AK502…: why a transaction set is rejected. */
const SET_CODES: Partial<Record<ProblemCode, string>> = { SET_TRAILER_MISSING: '2', SET_CONTROL_MISMATCH: '3', SET_COUNT_MISMATCH: '4' };
/** AK905…: why a functional group is rejected. */
const GROUP_CODES: Partial<Record<ProblemCode, string>> = {
  GROUP_TRAILER_MISSING: '3',
  GROUP_CONTROL_MISMATCH: '4',
  GROUP_COUNT_MISMATCH: '5',
};
/** CONTRL 0085: syntax errors at interchange (UCI) and message (UCM) level. */
const EDIFACT_CODES: Partial<Record<ProblemCode, string>> = {
  INTERCHANGE_COUNT_MISMATCH: '29',
  SET_COUNT_MISMATCH: '29',
  SET_CONTROL_MISMATCH: '28',
  SET_TRAILER_MISSING: '13',
  GROUP_COUNT_MISMATCH: '29',
  GROUP_CONTROL_MISMATCH: '28',
  GROUP_TRAILER_MISSING: '13',
};

/** Acknowledgments are never acknowledged: two auto-answering partners would answer each other forever. */
const isAcknowledgmentSet = (s: TransactionSet): boolean => s.id === '997' || s.id === '999' || s.id === 'CONTRL';

function acknowledgedGroups(ix: Envelope): FunctionalGroup[] {
  return ix.groups.filter((g) => g.explicit && g.functionalId !== 'FA' && !(g.sets.length > 0 && g.sets.every(isAcknowledgmentSet)));
}

/**
 * The demo partner's answer to one interchange: a 997 (X12) or CONTRL (EDIFACT) back to the
 * sender; undefined when there is nothing to answer — an incomplete interchange, or one that only
 * carries acknowledgments (997, 999, TA1, CONTRL). `nextControl` hands out control numbers.
 */
export function acknowledgment(ix: Interchange, nextControl: () => number, now: Date): { fileName: string; content: string } | undefined {
  const env = ix.envelope;
  if (!env.complete) return undefined;
  if (env.standard === 'X12') {
    const content = ack997(env, nextControl, now);
    return content === undefined ? undefined : { fileName: `997_${env.control}.x12`, content };
  }
  const content = contrl(env, nextControl, now);
  return content === undefined ? undefined : { fileName: `CONTRL_${env.control}.edi`, content };
}

/** One interchange back, one FA group per version (and application pair) received, one 997 per group. */
function ack997(ix: Envelope, nextControl: () => number, now: Date): string | undefined {
  const groups = acknowledgedGroups(ix);
  if (groups.length === 0) return undefined;
  const d = ediDate(now);
  const control = nextControl();
  const ctrl9 = String(control % 1_000_000_000).padStart(9, '0');
  // Our separators: * > ~ ; ISA11 echoes the sender's repetition separator when it does not clash.
  const rep = ix.syntaxId.length === 1 && !'*>~'.includes(ix.syntaxId) ? ix.syntaxId : 'U';
  const version = /^\d{5}$/.test(ix.version) ? ix.version : '00401';
  const test = ix.testIndicator === '' ? 'P' : ix.testIndicator.slice(0, 1);
  const segs: string[] = [
    `ISA*00*${pad('', 10)}*00*${pad('', 10)}*${pad(ix.receiver.qualifier, 2)}*${pad(ix.receiver.id, 15)}*${pad(ix.sender.qualifier, 2)}*${pad(ix.sender.id, 15)}*${d.yymmdd}*${d.hhmm}*${rep}*${version}*${ctrl9}*0*${test}*>`,
  ];
  // A TA1 about the envelope itself: when the sender asked for one (ISA14 = 1) or IEA01 is wrong.
  const h = ix.header
    .slice(0, 105)
    .split(ix.separators.element)
    .map((e) => e.trim());
  const wrongCount = ix.problems.some((p) => p.code === 'INTERCHANGE_COUNT_MISMATCH');
  if (wrongCount || h[14] === '1') segs.push(`TA1*${ix.control}*${h[9] ?? ''}*${h[10] ?? ''}*${wrongCount ? 'E*021' : 'A*000'}`);
  const buckets = new Map<string, FunctionalGroup[]>();
  for (const g of groups) {
    const key = `${g.version}\u0000${g.sender}\u0000${g.receiver}`;
    buckets.set(key, [...(buckets.get(key) ?? []), g]);
  }
  for (const bucket of buckets.values()) {
    const first = bucket[0] as FunctionalGroup;
    const gsControl = nextControl();
    segs.push(`GS*FA*${first.receiver}*${first.sender}*${d.ccyymmdd}*${d.hhmm}*${gsControl}*X*${first.version}`);
    bucket.forEach((g, i) => {
      const st = String(i + 1).padStart(4, '0');
      const body = [`ST*997*${st}`, `AK1*${g.functionalId}*${g.control}`];
      let accepted = 0;
      for (const set of g.sets) {
        const codes = codesOf(set.problems, SET_CODES);
        if (codes.length === 0) accepted++;
        body.push(`AK2*${set.id}*${set.control}`, codes.length === 0 ? 'AK5*A' : `AK5*R*${codes.slice(0, 5).join('*')}`);
      }
      const groupCodes = codesOf(g.problems, GROUP_CODES);
      const received = g.sets.length;
      const status = groupCodes.length > 0 ? 'R' : accepted === received ? 'A' : accepted === 0 ? 'R' : 'P';
      const declared = g.declaredSets !== undefined && Number.isFinite(g.declaredSets) ? g.declaredSets : received;
      body.push(`AK9*${status}*${declared}*${received}*${accepted}${groupCodes.length > 0 ? `*${groupCodes.slice(0, 5).join('*')}` : ''}`);
      body.push(`SE*${body.length + 1}*${st}`);
      segs.push(...body);
    });
    segs.push(`GE*${bucket.length}*${gsControl}`);
  }
  segs.push(`IEA*${buckets.size}*${ctrl9}`);
  return `${segs.join('~')}~`;
}

/** A composite as sent, re-written with the default EDIFACT separators of our answer. */
function recompose(raw: string, seps: Separators): string {
  return splitElements(raw, seps.component, seps.release)
    .map((c) => (seps.release ? c.replace(new RegExp(`\\${seps.release}(.)`, 'g'), '$1') : c).replace(/[?+:']/g, '?$&'))
    .join(':');
}

function contrl(ix: Envelope, nextControl: () => number, now: Date): string | undefined {
  const messages = ix.groups.flatMap((g) => g.sets);
  if (messages.length > 0 && messages.every(isAcknowledgmentSet)) return undefined;
  const d = ediDate(now);
  const control = nextControl();
  const syntax = /^\d$/.test(ix.version) ? Number(ix.version) : 3;
  const v4 = syntax >= 4;
  // The answer uses the sender's syntax identifier (character repertoire): UNOA…UNOY, IATA's IATB…
  const syntaxId = /^[A-Z]{4}$/.test(ix.syntaxId) ? ix.syntaxId : 'UNOC';
  const sender = recompose(ix.sender.raw, ix.separators);
  const receiver = recompose(ix.receiver.raw, ix.separators);
  const test = ix.testIndicator === '' ? '' : `++++++${ix.testIndicator.replace(/[?+:']/g, '')}`;
  const uciCodes = codesOf(ix.problems, EDIFACT_CODES);
  const body = [
    `UNH+1+CONTRL:${v4 ? '4:1' : 'D:3'}:UN`,
    `UCI+${recompose(ix.control, ix.separators)}+${sender}+${receiver}+${uciCodes.length > 0 ? `4+${uciCodes[0]}` : '7'}`,
  ];
  for (const g of ix.groups) {
    for (const m of g.sets) {
      const codes = codesOf([...m.problems, ...g.problems], EDIFACT_CODES);
      body.push(
        `UCM+${recompose(m.control, ix.separators)}+${recompose(m.identifier, ix.separators)}+${codes.length > 0 ? `4+${codes[0]}` : '7'}`,
      );
    }
  }
  body.push(`UNT+${body.length + 1}+1`);
  const segs = [
    `UNB+${syntaxId}:${syntax}+${receiver}+${sender}+${v4 ? d.ccyymmdd : d.yymmdd}:${d.hhmm}+${control}${test}`,
    ...body,
    `UNZ+1+${control}`,
  ];
  return `UNA:+.? '${segs.join("'")}'`;
}
