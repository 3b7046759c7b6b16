/**
 * Splits an X12 or EDIFACT byte stream into segments, chunk by chunk, without holding more than
 * one partial segment. Separators are learnt per interchange: from the fixed-width ISA (X12),
 * from a UNA service string advice, or the EDIFACT defaults when a UNB comes without one. After
 * each IEA/UNZ the tokenizer expects a new interchange header again, so files that concatenate
 * interchanges with different separators, a UNA before each UNB, a byte-order mark or blank lines
 * between interchanges are all read as their senders meant them.
 *
 * Bytes are read as latin1: every envelope character is ASCII, and the data between is passed
 * through untouched whatever its real encoding.
 */

export type Syntax = 'X12' | 'EDIFACT';

export interface Separators {
  readonly element: string;
  readonly component: string;
  readonly segment: string;
  /** EDIFACT release (escape) character; '' when there is none (X12, or a UNA declaring a space). */
  readonly release: string;
  /** X12 ISA11 from version 00402 on, EDIFACT UNA position 8; '' when not used. */
  readonly repetition: string;
}

export interface Segment {
  readonly syntax: Syntax;
  /** The segment tag (`ISA`, `GS`, `UNH`, …) with leading whitespace removed. */
  readonly tag: string;
  /** The segment without its terminator and without leading whitespace. */
  readonly text: string;
  readonly separators: Separators;
  /** 1-based position of the segment in the whole stream. */
  readonly index: number;
  /** False for a last segment that ends with the data instead of a terminator. */
  readonly terminated: boolean;
}

/** The stream cannot be split any further (no recognisable interchange header, malformed ISA/UNA, …). */
export interface TokenizerFailure {
  /** `not-edi`: no interchange header where one must be; `bad-header`: an ISA/UNA that cannot be read; `too-long`: no terminator in sight. */
  readonly kind: 'not-edi' | 'bad-header' | 'too-long';
  /** 1-based index of the interchange being read (the one the broken header would open). */
  readonly interchange: number;
  /** The segment index the failure is at (the header that cannot be read). */
  readonly index: number;
  readonly tag: string;
  readonly message: string;
}

export interface TokenizerSink {
  segment(s: Segment): void;
  fail(f: TokenizerFailure): void;
  /** With `envelopeOnly`: a segment that cannot be an envelope segment, counted but not built. */
  skip?(): void;
}

export const EDIFACT_DEFAULTS: Separators = { element: '+', component: ':', segment: "'", release: '?', repetition: '' };
/** ISO 9735 level B defaults (UNOB without UNA): information separators IS1–IS4. */
const EDIFACT_LEVEL_B: Separators = { element: '\x1d', component: '\x1f', segment: '\x1c', release: '', repetition: '' };

export const ISA_LENGTH = 106;
/** Offsets of the element separator before ISA01…ISA16 in the fixed-width ISA. */
const ISA_SEPARATOR_OFFSETS = [3, 6, 17, 20, 31, 34, 50, 53, 69, 76, 81, 83, 89, 99, 101, 103] as const;
/** A segment longer than this is taken as a missing terminator rather than buffered without end. */
export const MAX_SEGMENT_CHARS = 4 * 1024 * 1024;

const isSpace = (c: number): boolean => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
const isAlnum = (c: string): boolean => /^[A-Za-z0-9]$/.test(c);

export interface TokenizerOptions {
  readonly maxSegmentChars?: number;
  /**
   * Build segments only for tags that may be envelope segments (ISA IEA GS GE ST SE, UNA UNB UNG
   * UNE UNH UNT UNZ) and only count the others — most of a large file's cost would be building
   * segments nobody reads.
   */
  readonly envelopeOnly?: boolean;
}

/**
 * Whether the segment at `pos` may be an envelope segment, from its first bytes alone: X12
 * ISA IEA GS GE ST SE, EDIFACT UN* (service segments). Errs on the side of building.
 */
function mayBeEnvelope(data: Buffer, pos: number, end: number, element: number): boolean {
  const c0 = data[pos];
  const c1 = data[pos + 1];
  if (c0 === 0x55) return c1 === 0x4e; // UN…
  if (c0 === 0x47 || c0 === 0x53) {
    // GS GE ST SE, followed by an element separator or the end of the segment
    if (c1 !== 0x53 && c1 !== 0x45 && c1 !== 0x54) return false;
    const c2 = data[pos + 2] as number;
    return pos + 2 >= end || c2 === element || isSpace(c2);
  }
  return c0 === 0x49 && (c1 === 0x53 || c1 === 0x45) && data[pos + 2] === 0x41; // ISA IEA
}

export class Tokenizer {
  /** The unread end of the previous chunk (a partial segment or header). */
  private carry: Buffer | undefined;
  /** 'header': between interchanges, a header (ISA, UNA, UNB) is expected next. */
  private mode: 'header' | 'body' = 'header';
  private syntax: Syntax | undefined;
  private seps: Separators | undefined;
  private term = -1;
  private element = -1;
  private release = -1;
  private index = 0;
  private interchanges = 0;
  private failed = false;
  private readonly maxSegment: number;
  private readonly envelopeOnly: boolean;
  // The last segment skipped under envelopeOnly, as plain fields: an object per segment would be
  // garbage per segment.
  private skippedData: Buffer | undefined;
  private skippedStart = 0;
  private skippedEnd = 0;
  /** Inside a segment that is being skipped across chunks. */
  private skipping = false;
  private skipEscaped = false;
  private trailingEscape = false;

  constructor(
    private readonly sink: TokenizerSink,
    opts: TokenizerOptions = {},
  ) {
    this.maxSegment = opts.maxSegmentChars ?? MAX_SEGMENT_CHARS;
    this.envelopeOnly = opts.envelopeOnly === true && sink.skip !== undefined;
  }

  /** Feeds the next chunk (a string is taken as latin1: one character per byte). */
  push(chunk: Buffer | string): void {
    if (this.failed) return;
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'latin1') : chunk;
    this.run(this.carry ? Buffer.concat([this.carry, bytes]) : bytes, false);
  }

  /** No more data: emits the last segment even without a terminator. */
  end(): void {
    if (this.failed) return;
    this.run(this.carry ?? Buffer.alloc(0), true);
    this.carry = undefined;
  }

  get stopped(): boolean {
    return this.failed;
  }

  /** Index of the last segment read (built or skipped). */
  get lastIndex(): number {
    return this.index;
  }

  /** Tag of the last segment skipped under `envelopeOnly` (kept as a reference, cut only when asked). */
  lastSkippedTag(): string {
    const d = this.skippedData;
    return d ? this.tagOf(d.toString('latin1', this.skippedStart, Math.min(this.skippedEnd, this.skippedStart + 64))) : '';
  }

  private tagOf(text: string): string {
    const cut = this.seps ? text.indexOf(this.seps.element) : -1;
    if (cut > 0 && cut <= 3) return text.slice(0, cut);
    return (cut === -1 ? text : text.slice(0, cut)).trimEnd().slice(0, 16);
  }

  private fail(tag: string, message: string, kind: TokenizerFailure['kind'] = 'bad-header'): void {
    this.failed = true;
    this.carry = undefined;
    this.sink.fail({ kind, interchange: Math.max(1, this.interchanges), index: this.index + 1, tag, message });
  }

  private learn(syntax: Syntax, seps: Separators): void {
    this.syntax = syntax;
    this.seps = seps;
    this.term = seps.segment.charCodeAt(0);
    this.element = seps.element.charCodeAt(0);
    this.release = seps.release === '' ? -1 : seps.release.charCodeAt(0);
    this.mode = 'body';
  }

  private emit(text: string, terminated: boolean): void {
    const tag = this.tagOf(text);
    this.index++;
    this.sink.segment({ syntax: this.syntax as Syntax, tag, text, separators: this.seps as Separators, index: this.index, terminated });
    if ((this.syntax === 'X12' && tag === 'IEA') || (this.syntax === 'EDIFACT' && tag === 'UNZ')) this.mode = 'header';
  }

  private run(data: Buffer, final: boolean): void {
    const len = data.length;
    let pos = 0;
    if (this.skipping) {
      // Inside a long segment nobody reads: look for its end without keeping its bytes.
      const end = this.findTerminator(data, 0, this.skipEscaped);
      if (end === -1 && !final) {
        this.skipEscaped = this.trailingEscape;
        this.carry = undefined;
        return;
      }
      this.skipping = false;
      this.index++;
      (this.sink.skip as () => void)();
      pos = end === -1 ? len : end + 1;
    }
    while (!this.failed) {
      while (pos < len && isSpace(data[pos] as number)) pos++;
      if (this.mode === 'header' && data[pos] === 0xef && data[pos + 1] === 0xbb && data[pos + 2] === 0xbf) {
        pos += 3;
        continue;
      }
      if (pos >= len) break;
      if (this.mode === 'header') {
        if (len - pos < 4 && !final) break;
        const head = data.toString('latin1', pos, pos + 3);
        if (head === 'ISA') {
          if (len - pos < ISA_LENGTH + 1 && !final) break;
          this.interchanges++;
          if (
            !this.readIsa(
              data.toString('latin1', pos, pos + ISA_LENGTH),
              pos + ISA_LENGTH < len ? (data[pos + ISA_LENGTH] as number) : Number.NaN,
            )
          )
            return;
          pos += ISA_LENGTH;
          continue;
        }
        if (head === 'UNA') {
          if (len - pos < 9 && !final) break;
          this.interchanges++;
          if (!this.readUna(data.toString('latin1', pos, pos + 9))) return;
          pos += 9;
          continue;
        }
        if (head === 'UNB') {
          // A UNB without a UNA: the defaults of its syntax level.
          this.interchanges++;
          this.learn('EDIFACT', data[pos + 3] === 0x1d ? EDIFACT_LEVEL_B : EDIFACT_DEFAULTS);
          continue;
        }
        if (this.seps === undefined) {
          const start = data.toString('latin1', pos, pos + 12);
          this.fail(
            /^[A-Za-z0-9]{1,3}/.exec(start)?.[0] ?? '',
            `not an X12 (ISA) or EDIFACT (UNA/UNB) interchange: the data starts with ${JSON.stringify(start)}`,
            'not-edi',
          );
          return;
        }
        // Data after a complete interchange that opens no new one: split it with the last
        // separators so that the reader can name the stray segment.
        this.mode = 'body';
      }
      const end = this.findTerminator(data, pos, false);
      if (end === -1) {
        if (!final && this.envelopeOnly && len - pos >= 3 && !mayBeEnvelope(data, pos, len, this.element)) {
          // A segment that runs past this chunk and is not an envelope segment (a BIN segment, a
          // long free text): count it once its end comes, but do not buffer it.
          this.skipping = true;
          this.skipEscaped = this.trailingEscape;
          this.skippedData = data;
          this.skippedStart = pos;
          this.skippedEnd = len;
          pos = len;
          break;
        }
        if (final) {
          const rest = data.toString('latin1', pos);
          if (rest.trim() !== '') this.emit(rest, false);
          pos = len;
        } else if (len - pos > this.maxSegment) {
          this.fail(
            this.tagOf(data.toString('latin1', pos, pos + 16)),
            `no segment terminator ${JSON.stringify((this.seps as Separators).segment)} within ${this.maxSegment} bytes`,
            'too-long',
          );
          return;
        }
        break;
      }
      if (this.envelopeOnly && !mayBeEnvelope(data, pos, end, this.element)) {
        this.index++;
        this.skippedData = data;
        this.skippedStart = pos;
        this.skippedEnd = end;
        (this.sink.skip as () => void)();
      } else this.emit(data.toString('latin1', pos, end), true);
      pos = end + 1;
    }
    this.carry = pos >= len || this.failed ? undefined : data.subarray(pos);
  }

  /**
   * Index of the next unreleased segment terminator at or after `from`, or -1. `escaped`: the byte
   * at `from` is released by a release character at the end of the previous chunk. Sets
   * `trailingEscape` when the data ends with a release character.
   */
  private findTerminator(data: Buffer, from: number, escaped: boolean): number {
    const term = this.term;
    const release = this.release;
    this.trailingEscape = false;
    if (release === -1) return data.indexOf(term, from);
    const len = data.length;
    let i = escaped ? from + 1 : from;
    for (; i < len; i++) {
      const c = data[i];
      if (c === release) i++;
      else if (c === term) return i;
    }
    this.trailingEscape = i > len;
    return -1;
  }

  /** `next`: the byte after the ISA (NaN at the end of the data). */
  private readIsa(isa: string, next: number): boolean {
    if (isa.length < ISA_LENGTH) {
      this.fail('ISA', `the ISA is truncated: ${isa.length} characters where 106 are needed`);
      return false;
    }
    const el = isa[3] as string;
    if (isAlnum(el) || isSpace(el.charCodeAt(0))) {
      this.fail('ISA', `the element separator after "ISA" is ${JSON.stringify(el)}, which cannot be a separator`);
      return false;
    }
    for (let k = 1; k < ISA_SEPARATOR_OFFSETS.length; k++) {
      const at = ISA_SEPARATOR_OFFSETS[k] as number;
      if (isa[at] !== el) {
        this.fail(
          'ISA',
          `the ISA is not 106 characters of fixed-width elements: ISA${String(k + 1).padStart(2, '0')} does not start at offset ${at + 1}`,
        );
        return false;
      }
    }
    if (isa.slice(0, 105).split(el).length !== 17) {
      this.fail('ISA', `the element separator ${JSON.stringify(el)} also appears inside an ISA element`);
      return false;
    }
    const component = isa[104] as string;
    const segment = isa[105] as string;
    if (isAlnum(segment) || isAlnum(component) || new Set([el, component, segment]).size !== 3 || component === ' ') {
      this.fail(
        'ISA',
        `the ISA separators are not distinct non-alphanumeric characters (element ${JSON.stringify(el)}, component ${JSON.stringify(component)}, segment ${JSON.stringify(segment)})`,
      );
      return false;
    }
    // A file saved as UTF-8 with a non-ASCII separator: the separator is then two or three bytes.
    const lead = (c: number): boolean => c >= 0xc2 && c <= 0xf4;
    const cont = (c: number): boolean => c >= 0x80 && c <= 0xbf;
    if ((lead(component.charCodeAt(0)) && cont(segment.charCodeAt(0))) || (lead(segment.charCodeAt(0)) && cont(next))) {
      this.fail('ISA', 'the ISA ends in a multi-byte UTF-8 character: ISA16 and the segment terminator must each be one byte');
      return false;
    }
    const rep = isa[82] as string;
    const repetition =
      isa.slice(84, 89) >= '00402' && !isAlnum(rep) && rep !== ' ' && rep !== el && rep !== component && rep !== segment ? rep : '';
    this.learn('X12', { element: el, component, segment, release: '', repetition });
    this.emit(isa.slice(0, 105), true);
    return true;
  }

  private readUna(una: string): boolean {
    if (una.length < 9) {
      this.fail('UNA', `the UNA is truncated: ${una.length} characters where 9 are needed`);
      return false;
    }
    const [component, element, , release, repetition, segment] = una.slice(3) as unknown as string[];
    const seps: Separators = {
      element: element as string,
      component: component as string,
      segment: segment as string,
      release: release === ' ' ? '' : (release as string),
      repetition: repetition === ' ' ? '' : (repetition as string),
    };
    if (new Set([seps.element, seps.component, seps.segment]).size !== 3 || [seps.element, seps.component, seps.segment].some(isAlnum)) {
      this.fail('UNA', `the UNA separators are not distinct non-alphanumeric characters: ${JSON.stringify(una)}`);
      return false;
    }
    // The UNB that must follow is split with these separators.
    this.learn('EDIFACT', seps);
    this.index++;
    this.sink.segment({ syntax: 'EDIFACT', tag: 'UNA', text: una, separators: seps, index: this.index, terminated: true });
    return true;
  }
}
