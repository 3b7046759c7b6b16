/**
 * The fields of an interchange header (ISA, UNB) a reader reports: the parties, the control
 * reference, the test indicator and the syntax version. X12 keeps them in fixed elements; EDIFACT
 * packs parties and the syntax into composites.
 */
import { splitElements } from './elements.js';
import type { Party } from './structure.js';
import type { Segment } from './tokenizer.js';

export interface HeaderFields {
  readonly sender: Party;
  readonly receiver: Party;
  readonly control: string;
  readonly testIndicator: string;
  readonly version: string;
  readonly syntaxId: string;
}

/** `f`: the header's elements, split at the element separator. */
export function headerFields(s: Segment, f: string[]): HeaderFields {
  const el = (i: number): string => (f[i] ?? '').trim();
  if (s.syntax === 'X12')
    return {
      sender: { qualifier: el(5), id: el(6), raw: `${f[5] ?? ''}${s.separators.element}${f[6] ?? ''}` },
      receiver: { qualifier: el(7), id: el(8), raw: `${f[7] ?? ''}${s.separators.element}${f[8] ?? ''}` },
      control: el(13),
      testIndicator: el(15),
      version: el(12),
      syntaxId: f[11] ?? '',
    };
  const part = (i: number): string[] => splitElements(f[i] ?? '', s.separators.component, s.separators.release);
  const [sid = '', sq = ''] = part(2);
  const [rid = '', rq = ''] = part(3);
  const [syntaxId = '', version = ''] = part(1);
  return {
    sender: { qualifier: sq, id: sid, raw: f[2] ?? '' },
    receiver: { qualifier: rq, id: rid, raw: f[3] ?? '' },
    control: el(5),
    testIndicator: el(11),
    version,
    syntaxId,
  };
}
