/**
 * The verdict on a whole file: every interchange complete (the envelope level, always) and,
 * when asked, every group and set trailer present with the right counts and references. Fed
 * chunk by chunk, it stops at the first problem, so its cost is one pass over the bytes and its
 * memory one partial segment.
 */
import { EnvelopeReader } from './envelope.js';
import type { Problem, ProblemCode } from './structure.js';
import type { Syntax } from './tokenizer.js';

export interface CheckOptions {
  /** Also check GS/GE, ST/SE, UNG/UNE, UNH/UNT and the IEA01/UNZ01 counts. */
  readonly counts: boolean;
}

export type EnvelopeVerdict =
  | { readonly ok: true; readonly standard: Syntax; readonly interchanges: number }
  | { readonly ok: false; readonly reason: string; readonly code: ProblemCode };

/** `interchange 2, segment 57 (IEA): IEA02 '…' does not match ISA13 '…'`. */
export function describeProblem(p: Problem): string {
  const where = [
    p.interchange > 0 ? `interchange ${p.interchange}` : '',
    p.segment > 0 ? `segment ${p.segment}${p.tag ? ` (${p.tag})` : ''}` : '',
  ]
    .filter(Boolean)
    .join(', ');
  return where ? `${where}: ${p.message}` : p.message;
}

export class EnvelopeCheck {
  private readonly reader: EnvelopeReader;
  private first: Problem | undefined;
  private standard: Syntax | undefined;
  private interchanges = 0;

  constructor(opts: CheckOptions) {
    this.reader = new EnvelopeReader({
      onProblem: (p) => {
        if (this.first === undefined && (opts.counts || p.level === 'envelope')) this.first = p;
      },
      onInterchange: (ix) => {
        this.standard ??= ix.standard;
        this.interchanges++;
      },
    });
  }

  /** True once a problem decides the verdict: the rest of the data need not be read. */
  get decided(): boolean {
    return this.first !== undefined;
  }

  push(chunk: Buffer | string): void {
    if (this.first === undefined) this.reader.push(chunk);
  }

  end(): EnvelopeVerdict {
    if (this.first === undefined) this.reader.end();
    const p = this.first;
    if (p) return { ok: false, reason: describeProblem(p), code: p.code };
    return { ok: true, standard: this.standard as Syntax, interchanges: this.interchanges };
  }
}

/** The verdict on data held in memory. */
export function checkEnvelope(data: Buffer | string, opts: CheckOptions): EnvelopeVerdict {
  const c = new EnvelopeCheck(opts);
  c.push(data);
  return c.end();
}

/** The verdict on a stream of chunks; stops reading at the first problem. */
export async function checkEnvelopeStream(chunks: AsyncIterable<Buffer | string>, opts: CheckOptions): Promise<EnvelopeVerdict> {
  const c = new EnvelopeCheck(opts);
  for await (const chunk of chunks) {
    c.push(chunk);
    if (c.decided) break;
  }
  return c.end();
}
