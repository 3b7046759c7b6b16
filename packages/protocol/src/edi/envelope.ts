/**
 * The envelope structure of a stream of segments: interchanges (ISA…IEA, [UNA]UNB…UNZ), their
 * functional groups (GS…GE, UNG…UNE) and transaction sets / messages (ST…SE, UNH…UNT), with the
 * control references and counts their trailers declare checked against what was actually read.
 *
 * Two levels of problems: `envelope` (the interchange itself is incomplete or inconsistent — the
 * truncated export) and `counts` (a group or set trailer is missing or declares a wrong count or
 * reference; IEA01/UNZ01 too). Nothing is kept per segment: a reader in summary mode holds a few
 * counters whatever the size of the stream; in detail mode it also keeps one small record per
 * group and set (what an acknowledgment needs).
 */
import { firstThree, split, splitElements } from './elements.js';
import { headerFields } from './header.js';
import type { FunctionalGroup, Interchange, Problem, ProblemCode, ProblemLevel, TransactionSet } from './structure.js';
import { Tokenizer, type Segment, type TokenizerFailure, type TokenizerOptions } from './tokenizer.js';

export interface ReaderOptions extends TokenizerOptions {
  /** Keep one record per group and set (for acknowledgments). */
  readonly detail?: boolean;
  readonly onInterchange?: (ix: Interchange) => void;
  readonly onProblem?: (p: Problem) => void;
}

/** Shared by every group and set in summary mode, where nothing is recorded on them: no array per set. */
const NONE: Problem[] = [];
const NONE_SETS: TransactionSet[] = [];

const count = (v: string | undefined): number => (v !== undefined && /^\s*\d+\s*$/.test(v) ? Number(v) : Number.NaN);
const q = (v: string | undefined): string => `'${v ?? ''}'`;

/** Reads segments into interchanges; feed it with `push`/`end`, or give it to a Tokenizer yourself. */
export class EnvelopeReader {
  private readonly tokenizer: Tokenizer;
  private readonly detail: boolean;
  private ix: Interchange | undefined;
  private group: FunctionalGroup | undefined;
  private set: TransactionSet | undefined;
  private interchanges = 0;
  private lastSegment: Segment | undefined;
  private afterUna: Segment | undefined;
  private lastClosed = 0;
  private ended = false;

  constructor(private readonly opts: ReaderOptions = {}) {
    this.detail = opts.detail ?? false;
    this.tokenizer = new Tokenizer(
      {
        segment: (s) => this.segment(s),
        fail: (f) => this.failure(f),
        skip: () => {
          if (this.set) this.set.segments++;
          else if (!this.ix) this.strayData();
        },
      },
      { ...opts, envelopeOnly: true },
    );
  }

  push(chunk: Buffer | string): void {
    this.tokenizer.push(chunk);
  }

  /** End of the data: reports an interchange left open and a stream without any interchange. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.tokenizer.end();
    if (this.tokenizer.stopped) return;
    if (this.afterUna)
      this.problem('envelope', 'NOT_CLOSED', this.afterUna, 'the UNA is not followed by a UNB: the file ends there', this.interchanges + 1);
    const ix = this.ix;
    if (ix) {
      const last = this.lastRead();
      const trailer = ix.standard === 'X12' ? 'IEA' : 'UNZ';
      this.problem(
        'envelope',
        'NOT_CLOSED',
        last,
        `${ix.standard === 'X12' ? 'ISA' : 'UNB'} ${ix.control} is not closed by a${trailer === 'IEA' ? 'n' : ''} ${trailer}: the data ends after segment ${last.index} (${last.tag}) — truncated interchange`,
        ix.index,
        ix,
      );
      this.closeInterchange();
    } else if (this.interchanges === 0) {
      this.problem('envelope', 'EMPTY', undefined, 'no interchange: the file is empty or holds only whitespace', 0);
    }
  }

  /** The last segment read, whether it was built or only counted. */
  private lastRead(): { index: number; tag: string } {
    const built = this.lastSegment;
    const index = this.tokenizer.lastIndex;
    if (built && built.index === index) return built;
    return { index, tag: this.tokenizer.lastSkippedTag() };
  }

  private strayData(): void {
    this.outside(this.lastRead());
  }

  private failure(f: TokenizerFailure): void {
    const code: ProblemCode = f.kind === 'bad-header' ? 'BAD_HEADER' : f.kind === 'too-long' ? 'SEGMENT_TOO_LONG' : 'NOT_EDI';
    const p: Problem = {
      level: 'envelope',
      code,
      interchange: code === 'NOT_EDI' && this.interchanges === 0 ? 0 : f.interchange,
      segment: f.index,
      tag: f.tag,
      message: f.message,
    };
    this.record(p);
  }

  private record(p: Problem, on?: { problems: Problem[] }): void {
    if (this.detail) (on ?? this.set ?? this.group ?? this.ix)?.problems.push(p);
    this.opts.onProblem?.(p);
  }

  private problem(
    level: ProblemLevel,
    code: ProblemCode,
    s: { index: number; tag: string } | undefined,
    message: string,
    interchange = this.ix?.index ?? 0,
    on?: { problems: Problem[] },
  ): void {
    this.record({ level, code, interchange, segment: s?.index ?? 0, tag: s?.tag ?? '', message }, on);
  }

  private segment(s: Segment): void {
    this.lastSegment = s;
    if (this.afterUna && s.tag !== 'UNB') {
      this.problem(
        'envelope',
        'BAD_HEADER',
        s,
        `the UNA is followed by ${s.tag || 'an empty segment'}, not by a UNB`,
        this.interchanges + 1,
      );
      this.afterUna = undefined;
    }
    if (s.syntax === 'X12') this.x12(s);
    else this.edifact(s);
  }

  private openInterchange(s: Segment, f: string[]): void {
    const x12 = s.syntax === 'X12';
    const { sender, receiver, control, testIndicator, version, syntaxId } = headerFields(s, f);
    this.interchanges++;
    this.ix = {
      index: this.interchanges,
      standard: s.syntax,
      separators: s.separators,
      header: x12 ? s.text + s.separators.segment : s.text,
      control,
      sender,
      receiver,
      testIndicator,
      version,
      syntaxId,
      groups: [],
      groupCount: 0,
      setCount: 0,
      complete: false,
      problems: [],
    };
    const head = x12 ? 'ISA13' : 'UNB 0020';
    if (control === '') this.problem('envelope', 'MISSING_CONTROL', s, `${head} (interchange control reference) is empty`);
    if (!x12) {
      if (sender.id === '') this.problem('envelope', 'MISSING_PARTY', s, 'UNB S002 (interchange sender) is empty');
      if (receiver.id === '') this.problem('envelope', 'MISSING_PARTY', s, 'UNB S003 (interchange recipient) is empty');
    }
  }

  private closeInterchange(): void {
    const ix = this.ix as Interchange;
    this.ix = undefined;
    this.group = undefined;
    this.set = undefined;
    this.lastClosed = ix.index;
    this.opts.onInterchange?.(ix);
  }

  private outside(s: { index: number; tag: string }): void {
    const where = this.lastClosed > 0 ? `after the end of interchange ${this.lastClosed}` : 'before any interchange';
    this.problem('envelope', 'OUTSIDE_INTERCHANGE', s, `segment ${s.tag || '(no tag)'} is outside an interchange (${where})`, 0);
  }

  private openGroup(g: Omit<FunctionalGroup, 'sets' | 'setCount' | 'declaredSets' | 'complete' | 'problems'>): void {
    const ix = this.ix as Interchange;
    this.group = {
      ...g,
      sets: this.detail ? [] : NONE_SETS,
      setCount: 0,
      declaredSets: undefined,
      complete: false,
      problems: this.detail ? [] : NONE,
    };
    if (g.explicit) ix.groupCount++;
    if (this.detail) ix.groups.push(this.group);
  }

  private openSet(id: string, control: string, identifier: string): void {
    const ix = this.ix as Interchange;
    const g = this.group as FunctionalGroup;
    this.set = { id, control, identifier, segments: 1, complete: false, problems: this.detail ? [] : NONE };
    g.setCount++;
    ix.setCount++;
    if (this.detail) g.sets.push(this.set);
  }

  /** Closes an open set or group whose trailer never came (`before` names what came instead). */
  private missingTrailers(s: Segment, before: string, sets: boolean, groups: boolean): void {
    const x12 = s.syntax === 'X12';
    if (sets && this.set) {
      this.problem(
        'counts',
        'SET_TRAILER_MISSING',
        s,
        `${x12 ? 'ST' : 'UNH'} ${this.set.control} (${this.set.id}) is not closed by an ${x12 ? 'SE' : 'UNT'} before ${before}`,
        undefined,
        this.set,
      );
      this.set = undefined;
    }
    if (groups && this.group?.explicit) {
      this.problem(
        'counts',
        'GROUP_TRAILER_MISSING',
        s,
        `${x12 ? 'GS' : 'UNG'} ${this.group.control} is not closed by a ${x12 ? 'GE' : 'UNE'} before ${before}`,
        undefined,
        this.group,
      );
      this.group = undefined;
    }
  }

  private x12(s: Segment): void {
    const tag = s.tag;
    if (tag === 'ISA') {
      if (this.ix) {
        this.problem('envelope', 'HEADER_INSIDE_INTERCHANGE', s, `ISA ${this.ix.control} is not closed by an IEA before the next ISA`);
        this.closeInterchange();
      }
      this.openInterchange(s, split(s.text, s.separators.element));
      return;
    }
    const ix = this.ix;
    if (!ix) return this.outside(s);
    if (tag !== 'GS' && tag !== 'ST' && tag !== 'SE' && tag !== 'GE' && tag !== 'IEA') {
      if (this.set) this.set.segments++;
      return;
    }
    const f = tag === 'GS' ? split(s.text, s.separators.element) : firstThree(s.text, s.separators.element);
    const el = (i: number): string => (f[i] ?? '').trim();
    switch (tag) {
      case 'GS':
        this.missingTrailers(s, 'the next GS', true, true);
        this.openGroup({ functionalId: el(1), control: el(6), version: el(8), sender: el(2), receiver: el(3), explicit: true });
        return;
      case 'ST':
        this.missingTrailers(s, 'the next ST', true, false);
        if (!this.group) {
          this.problem('counts', 'SET_OUTSIDE_GROUP', s, `ST ${el(2)} (${el(1)}) is outside a functional group (no GS before it)`);
          this.openGroup({ functionalId: '', control: '', version: '', sender: '', receiver: '', explicit: false });
        }
        this.openSet(el(1), el(2), '');
        return;
      case 'SE': {
        const set = this.set;
        if (!set) return this.problem('counts', 'TRAILER_WITHOUT_HEADER', s, 'SE without an ST');
        set.segments++;
        if (count(f[1]) !== set.segments)
          this.problem(
            'counts',
            'SET_COUNT_MISMATCH',
            s,
            `SE01 ${q(f[1])} does not match the ${set.segments} segments of ST ${set.control} (${set.id})`,
            undefined,
            set,
          );
        if (el(2) !== set.control)
          this.problem('counts', 'SET_CONTROL_MISMATCH', s, `SE02 ${q(f[2])} does not match ST02 ${q(set.control)}`, undefined, set);
        set.complete = true;
        this.set = undefined;
        return;
      }
      case 'GE': {
        this.missingTrailers(s, 'the GE', true, false);
        const g = this.group;
        if (!g?.explicit) return this.problem('counts', 'TRAILER_WITHOUT_HEADER', s, 'GE without a GS');
        g.declaredSets = count(f[1]);
        if (count(f[1]) !== g.setCount)
          this.problem(
            'counts',
            'GROUP_COUNT_MISMATCH',
            s,
            `GE01 ${q(f[1])} does not match the ${g.setCount} transaction sets of GS ${g.control}`,
            undefined,
            g,
          );
        if (el(2) !== g.control)
          this.problem('counts', 'GROUP_CONTROL_MISMATCH', s, `GE02 ${q(f[2])} does not match GS06 ${q(g.control)}`, undefined, g);
        g.complete = true;
        this.group = undefined;
        return;
      }
      case 'IEA': {
        this.missingTrailers(s, 'the IEA', true, true);
        if (el(2) !== ix.control)
          this.problem('envelope', 'CONTROL_MISMATCH', s, `IEA02 ${q(f[2])} does not match ISA13 ${q(ix.control)}`, undefined, ix);
        if (count(f[1]) !== ix.groupCount)
          this.problem(
            'counts',
            'INTERCHANGE_COUNT_MISMATCH',
            s,
            `IEA01 ${q(f[1])} does not match the ${ix.groupCount} functional groups read`,
            undefined,
            ix,
          );
        ix.complete = true;
        this.closeInterchange();
        return;
      }
    }
  }

  private edifact(s: Segment): void {
    const tag = s.tag;
    const seps = s.separators;
    if (tag === 'UNA') {
      if (this.ix) {
        this.problem('envelope', 'HEADER_INSIDE_INTERCHANGE', s, `UNB ${this.ix.control} is not closed by a UNZ before the next UNA`);
        this.closeInterchange();
      }
      this.afterUna = s;
      return;
    }
    const f =
      tag === 'UNB' || tag === 'UNG' || tag === 'UNE' || tag === 'UNH' || tag === 'UNT' || tag === 'UNZ'
        ? splitElements(s.text, seps.element, seps.release)
        : undefined;
    if (tag === 'UNB') {
      this.afterUna = undefined;
      if (this.ix) {
        this.problem('envelope', 'HEADER_INSIDE_INTERCHANGE', s, `UNB ${this.ix.control} is not closed by a UNZ before the next UNB`);
        this.closeInterchange();
      }
      this.openInterchange(s, f as string[]);
      return;
    }
    const ix = this.ix;
    if (!ix) return this.outside(s);
    if (!f) {
      if (this.set) this.set.segments++;
      return;
    }
    const el = (i: number): string => (f[i] ?? '').trim();
    switch (tag) {
      case 'UNG':
        this.missingTrailers(s, 'the next UNG', true, true);
        this.group = undefined;
        this.openGroup({ functionalId: el(1), control: el(5), version: el(7), sender: el(2), receiver: el(3), explicit: true });
        return;
      case 'UNH': {
        this.missingTrailers(s, 'the next UNH', true, false);
        if (!this.group) this.openGroup({ functionalId: '', control: '', version: '', sender: '', receiver: '', explicit: false });
        const identifier = f[2] ?? '';
        this.openSet(splitElements(identifier, seps.component, seps.release)[0] ?? '', el(1), identifier);
        return;
      }
      case 'UNT': {
        const set = this.set;
        if (!set) return this.problem('counts', 'TRAILER_WITHOUT_HEADER', s, 'UNT without a UNH');
        set.segments++;
        if (count(f[1]) !== set.segments)
          this.problem(
            'counts',
            'SET_COUNT_MISMATCH',
            s,
            `UNT 0074 ${q(f[1])} does not match the ${set.segments} segments of UNH ${set.control} (${set.id})`,
            undefined,
            set,
          );
        if (el(2) !== set.control)
          this.problem(
            'counts',
            'SET_CONTROL_MISMATCH',
            s,
            `UNT 0062 ${q(f[2])} does not match UNH 0062 ${q(set.control)}`,
            undefined,
            set,
          );
        set.complete = true;
        this.set = undefined;
        return;
      }
      case 'UNE': {
        this.missingTrailers(s, 'the UNE', true, false);
        const g = this.group;
        if (!g?.explicit) return this.problem('counts', 'TRAILER_WITHOUT_HEADER', s, 'UNE without a UNG');
        g.declaredSets = count(f[1]);
        if (count(f[1]) !== g.setCount)
          this.problem(
            'counts',
            'GROUP_COUNT_MISMATCH',
            s,
            `UNE 0060 ${q(f[1])} does not match the ${g.setCount} messages of UNG ${g.control}`,
            undefined,
            g,
          );
        if (el(2) !== g.control)
          this.problem('counts', 'GROUP_CONTROL_MISMATCH', s, `UNE 0048 ${q(f[2])} does not match UNG 0048 ${q(g.control)}`, undefined, g);
        g.complete = true;
        this.group = undefined;
        return;
      }
      case 'UNZ': {
        this.missingTrailers(s, 'the UNZ', true, true);
        if (el(2) !== ix.control)
          this.problem('envelope', 'CONTROL_MISMATCH', s, `UNZ 0020 ${q(f[2])} does not match UNB 0020 ${q(ix.control)}`, undefined, ix);
        const expected = ix.groupCount > 0 ? ix.groupCount : ix.setCount;
        if (count(f[1]) !== expected) {
          this.problem(
            'counts',
            'INTERCHANGE_COUNT_MISMATCH',
            s,
            `UNZ 0036 ${q(f[1])} does not match the ${expected} ${ix.groupCount > 0 ? 'groups' : 'messages'} read`,
            undefined,
            ix,
          );
        }
        ix.complete = true;
        this.closeInterchange();
        return;
      }
    }
  }
}
