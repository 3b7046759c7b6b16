/**
 * Just enough X12 and EDIFACT for the emulator: who sent an interchange to whom (routing when an
 * upload names no grid IDs), the interchanges inside a parcel, and the demo partner's answer (a 997
 * functional acknowledgment for X12, a CONTRL for EDIFACT).
 */

export interface Party {
  readonly qualifier: string;
  readonly id: string;
}

export interface Interchange {
  readonly standard: 'X12' | 'EDIFACT';
  readonly sender: Party;
  readonly receiver: Party;
  readonly controlNumber: string;
  /** The ISA segment (X12) or the UNB segment (EDIFACT), as sent. */
  readonly header: string;
  /** First transaction set type (ST01 / UNH message type), when present. */
  readonly documentType: string | null;
  /** GS01 and GS06 of the first functional group (X12), for the 997. */
  readonly group?: { readonly functionalId: string; readonly controlNumber: string };
}

const ISA_LENGTH = 106;

function parseIsa(text: string, at: number): { interchange: Interchange; end: number } | undefined {
  const isa = text.slice(at, at + ISA_LENGTH);
  if (isa.length < ISA_LENGTH || !isa.startsWith('ISA')) return undefined;
  const el = isa[3] as string;
  const seg = isa[105] as string;
  const f = isa.slice(0, 105).split(el);
  if (f.length !== 17) return undefined;
  const control = (f[13] ?? '').trim();
  const iea = text.indexOf(`${seg}IEA${el}`, at);
  const end = iea === -1 ? -1 : text.indexOf(seg, iea + 1);
  let documentType: string | null = null;
  let group: Interchange['group'];
  const body = text.slice(at + ISA_LENGTH, iea === -1 ? undefined : iea + 1);
  for (const s of body.split(seg)) {
    const parts = s.replace(/^\s+/, '').split(el);
    if (parts[0] === 'GS' && !group) group = { functionalId: parts[1] ?? '', controlNumber: parts[6] ?? '' };
    if (parts[0] === 'ST' && documentType === null) documentType = parts[1] ?? null;
  }
  return {
    interchange: {
      standard: 'X12',
      sender: { qualifier: (f[5] ?? '').trim(), id: (f[6] ?? '').trim() },
      receiver: { qualifier: (f[7] ?? '').trim(), id: (f[8] ?? '').trim() },
      controlNumber: control,
      header: isa,
      documentType,
      ...(group ? { group } : {}),
    },
    end: end === -1 ? text.length : end + 1,
  };
}

function parseUnb(text: string, at: number): { interchange: Interchange; end: number } | undefined {
  let comp = ':';
  let el = '+';
  let seg = "'";
  let start = at;
  if (text.startsWith('UNA', at)) {
    comp = text[at + 3] ?? ':';
    el = text[at + 4] ?? '+';
    seg = text[at + 8] ?? "'";
    start = at + 9;
  }
  while (start < text.length && /\s/.test(text[start] as string)) start++;
  if (!text.startsWith(`UNB${el}`, start)) return undefined;
  const unbEnd = text.indexOf(seg, start);
  if (unbEnd === -1) return undefined;
  const unb = text.slice(start, unbEnd);
  const f = unb.split(el);
  const [senderId = '', senderQual = ''] = (f[2] ?? '').split(comp);
  const [receiverId = '', receiverQual = ''] = (f[3] ?? '').split(comp);
  const unh = text.indexOf(`UNH${el}`, unbEnd);
  const documentType = unh === -1 ? null : ((text.slice(unh, text.indexOf(seg, unh)).split(el)[2] ?? '').split(comp)[0] ?? null);
  const unz = text.indexOf(`UNZ${el}`, unbEnd);
  const end = unz === -1 ? text.length : text.indexOf(seg, unz) + 1 || text.length;
  return {
    interchange: {
      standard: 'EDIFACT',
      sender: { qualifier: senderQual, id: senderId },
      receiver: { qualifier: receiverQual, id: receiverId },
      controlNumber: f[5] ?? '',
      header: unb,
      documentType,
    },
    end,
  };
}

/** Every interchange in a parcel (X12 ISA…IEA, EDIFACT [UNA]UNB…UNZ); empty for other content. */
export function parseInterchanges(text: string): Interchange[] {
  const out: Interchange[] = [];
  let at = 0;
  while (at < text.length) {
    while (at < text.length && /\s/.test(text[at] as string)) at++;
    const found = text.startsWith('ISA', at) ? parseIsa(text, at) : text.startsWith('UNA', at) || text.startsWith('UNB', at) ? parseUnb(text, at) : undefined;
    if (!found) break;
    out.push(found.interchange);
    at = found.end;
  }
  return out;
}

const pad = (s: string, n: number): string => s.padEnd(n, ' ').slice(0, n);

function ediDate(now: Date): { yymmdd: string; ccyymmdd: string; hhmm: string } {
  const iso = now.toISOString();
  return { yymmdd: iso.slice(2, 4) + iso.slice(5, 7) + iso.slice(8, 10), ccyymmdd: iso.slice(0, 4) + iso.slice(5, 7) + iso.slice(8, 10), hhmm: iso.slice(11, 13) + iso.slice(14, 16) };
}

/** The demo partner's answer to one interchange: a 997 (X12) or CONTRL (EDIFACT) back to the sender. */
export function acknowledgment(ix: Interchange, control: number, now: Date): { fileName: string; content: string } {
  const d = ediDate(now);
  const ctrl9 = String(control % 1_000_000_000).padStart(9, '0');
  if (ix.standard === 'X12') {
    const isa = `ISA*00*${pad('', 10)}*00*${pad('', 10)}*${pad(ix.receiver.qualifier, 2)}*${pad(ix.receiver.id, 15)}*${pad(ix.sender.qualifier, 2)}*${pad(ix.sender.id, 15)}*${d.yymmdd}*${d.hhmm}*U*00401*${ctrl9}*0*P*>~`;
    const g = ix.group ?? { functionalId: 'IN', controlNumber: ix.controlNumber };
    const body = [
      `GS*FA*${ix.receiver.id}*${ix.sender.id}*${d.ccyymmdd}*${d.hhmm}*${control}*X*004010`,
      'ST*997*0001',
      `AK1*${g.functionalId}*${g.controlNumber}`,
      'AK9*A*1*1*1',
      'SE*4*0001',
      `GE*1*${control}`,
      `IEA*1*${ctrl9}`,
    ];
    return { fileName: `997_${ix.controlNumber}.x12`, content: `${isa}${body.join('~')}~` };
  }
  const segs = [
    "UNA:+.? '",
    `UNB+UNOC:3+${ix.receiver.id}:${ix.receiver.qualifier}+${ix.sender.id}:${ix.sender.qualifier}+${d.yymmdd}:${d.hhmm}+${control}`,
    'UNH+1+CONTRL:D:3:UN',
    `UCI+${ix.controlNumber}+${ix.sender.id}:${ix.sender.qualifier}+${ix.receiver.id}:${ix.receiver.qualifier}+7`,
    'UNT+3+1',
    `UNZ+1+${control}`,
  ];
  return { fileName: `CONTRL_${ix.controlNumber}.edi`, content: `${segs[0]}${segs.slice(1).join("'")}'` };
}
