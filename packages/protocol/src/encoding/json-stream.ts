/**
 * A streaming JSON reader for bodies that carry one huge string field — a parcel's base64
 * `content`, in a download response (`data.content`) or an upload request (`content`).
 *
 * Why not JSON.parse: a 1 GB parcel is a 1.33 GB JSON string, above V8's maximum string length
 * (≈ 512 MB), and holding it would make memory grow with the file. Why not stream-json: 3.x needs
 * Node 22, and 1.x hands strings over in 256-character tokens with an object per token, which is
 * far slower than slicing the chunk at the next quote. This parser handles the whole JSON grammar
 * (nesting, escapes and `\uXXXX` split across chunk boundaries, numbers, literals, whitespace)
 * character by character for the small parts, and with `indexOf` for the bodies of strings.
 *
 * The designated field is delivered piecewise to `onChunk` (escapes resolved) and left out of the
 * returned value; every other value is built as JSON.parse would build it.
 */
import { GridsyncError } from '../errors/index.js';

export type JsonPath = readonly (string | number)[];

/**
 * The body is not valid JSON (`malformed`), ended before the value was complete (`truncated`), or
 * brought more beside the streamed field than StreamingJsonOptions.maxKept allows (`kept-chars`,
 * `kept-values`).
 */
export class JsonStreamError extends GridsyncError {
  readonly code = 'GRID_JSON_STREAM';
  constructor(
    readonly reason: 'malformed' | 'truncated' | 'kept-chars' | 'kept-values',
    message: string,
  ) {
    super(message);
  }
}

type Frame =
  | { kind: 'object'; value: Record<string, unknown>; key: string | null; state: 'keyOrEnd' | 'key' | 'colon' | 'value' | 'commaOrEnd' }
  | { kind: 'array'; value: unknown[]; state: 'valueOrEnd' | 'value' | 'commaOrEnd' };

const MAX_DEPTH = 64;
const MAX_SMALL_STRING = 1 << 20; // a non-streamed string above 1 MiB is not an envelope field
const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
const isWhitespace = (c: string): boolean => c === ' ' || c === '\n' || c === '\r' || c === '\t';
const LITERAL_CHAR = /[0-9a-zA-Z+\-.]/;

export interface StreamingJsonOptions {
  /** Path of the string field to stream, e.g. `['data', 'content']`. */
  readonly streamField: JsonPath;
  /** Receives the field's decoded text piece by piece. A returned promise is awaited (backpressure). */
  readonly onChunk: (text: string) => void | Promise<void>;
  /**
   * What the rest of the body may bring, all of which is built in memory: its characters and its
   * values (members and elements). The streamed field is bounded by its reader; without these the
   * rest was not, and members trailing a parcel's content were held until the heap ran out.
   */
  readonly maxKept?: { readonly chars: number; readonly values: number };
}

export class StreamingJsonParser {
  private readonly stack: Frame[] = [];
  private root: unknown = undefined;
  private done = false;
  private streamedFieldSeen = false;
  // Inside a string:
  private inString = false;
  private stringIsKey = false;
  private streaming = false;
  /** Pieces of a string value: raw body bytes (as latin1 code units) or text from escapes. */
  private strParts: string[] = [];
  private strRaw: boolean[] = [];
  private strLength = 0;
  private escape: '' | 'start' | 'unicode' = '';
  private unicodeDigits = '';
  // Inside a number or true/false/null:
  private literal = '';
  private pending: string[] = [];
  /** Characters and values of the body outside the streamed field, so far. */
  private keptChars = 0;
  private keptValues = 0;

  constructor(private readonly options: StreamingJsonOptions) {}

  /** Feed the next piece of text. Await it: the streamed field's `onChunk` may apply backpressure. */
  async write(text: string): Promise<void> {
    this.keptChars += text.length;
    let i = 0;
    const n = text.length;
    while (i < n) {
      if (this.inString) {
        const streamed = this.streaming;
        const from = i;
        i = this.scanString(text, i);
        // Escapes included: a serializer that writes base64's `/` as `\/` doubles those characters.
        if (streamed) this.keptChars -= i - from;
        if (this.pending.length > 0) await this.flushPending();
        continue;
      }
      const c = text[i] as string;
      if (this.literal !== '') {
        if (LITERAL_CHAR.test(c)) {
          this.literal += c;
          if (this.literal.length > 64) throw new JsonStreamError('malformed', `literal too long: ${this.literal.slice(0, 20)}…`);
          i++;
          continue;
        }
        this.finishLiteral();
        continue; // re-examine c as a structural character
      }
      i++;
      if (isWhitespace(c)) continue;
      this.structural(c);
    }
    this.checkKept();
    if (this.pending.length > 0) await this.flushPending();
  }

  /** The end of the body: returns the parsed value without the streamed field. */
  end(): { value: unknown; streamedFieldSeen: boolean } {
    if (this.literal !== '' && this.stack.length === 0) this.finishLiteral();
    if (!this.done) throw new JsonStreamError('truncated', 'the JSON body ended before it was complete');
    return { value: this.root, streamedFieldSeen: this.streamedFieldSeen };
  }

  private async flushPending(): Promise<void> {
    const parts = this.pending;
    this.pending = [];
    for (const p of parts) await this.options.onChunk(p);
  }

  private scanString(text: string, start: number): number {
    let i = start;
    const n = text.length;
    while (i < n) {
      if (this.escape === 'unicode') {
        const take = Math.min(4 - this.unicodeDigits.length, n - i);
        this.unicodeDigits += text.slice(i, i + take);
        i += take;
        if (this.unicodeDigits.length < 4) return i;
        if (!/^[0-9a-fA-F]{4}$/.test(this.unicodeDigits)) throw new JsonStreamError('malformed', `bad \\u escape: ${this.unicodeDigits}`);
        this.appendString(String.fromCharCode(Number.parseInt(this.unicodeDigits, 16)));
        this.escape = '';
        this.unicodeDigits = '';
        continue;
      }
      if (this.escape === 'start') {
        const c = text[i] as string;
        i++;
        if (c === 'u') {
          this.escape = 'unicode';
          continue;
        }
        const mapped = ESCAPES[c];
        if (mapped === undefined) throw new JsonStreamError('malformed', `bad escape: \\${c}`);
        this.appendString(mapped);
        this.escape = '';
        continue;
      }
      const quote = text.indexOf('"', i);
      const backslash = text.indexOf('\\', i);
      const stop = quote === -1 ? backslash : backslash === -1 ? quote : Math.min(quote, backslash);
      if (stop === -1) {
        this.appendString(text.slice(i), true);
        return n;
      }
      if (stop > i) this.appendString(text.slice(i, stop), true);
      i = stop + 1;
      if (stop === backslash) {
        this.escape = 'start';
        continue;
      }
      this.finishString();
      return i;
    }
    return i;
  }

  /** `raw`: text as it stood in the body (not an escape's result), where JSON forbids control characters. */
  private appendString(s: string, raw = false): void {
    if (s.length === 0) return;
    if (raw && !this.streaming && /[\u0000-\u001f]/.test(s)) throw new JsonStreamError('malformed', 'control character in a string');
    if (this.streaming) {
      this.pending.push(s);
      return;
    }
    this.strLength += s.length;
    if (this.strLength > MAX_SMALL_STRING) throw new JsonStreamError('malformed', 'a string field is larger than 1 MiB');
    this.strParts.push(s);
    this.strRaw.push(raw);
  }

  /** The string value: runs of raw bytes decoded as UTF-8 (strictly), escape results as they are. */
  private assembleString(): string {
    let out = '';
    let bytes = '';
    const flush = (): void => {
      if (bytes === '') return;
      try {
        out += UTF8.decode(Buffer.from(bytes, 'latin1'));
      } catch {
        throw new JsonStreamError('malformed', 'a string is not valid UTF-8');
      }
      bytes = '';
    };
    this.strParts.forEach((part, i) => {
      if (this.strRaw[i]) bytes += part;
      else {
        flush();
        out += part;
      }
    });
    flush();
    return out;
  }

  private finishString(): void {
    this.inString = false;
    if (this.streaming) {
      this.streaming = false;
      this.streamedFieldSeen = true;
      this.afterValue(undefined, true);
      return;
    }
    const s = this.assembleString();
    this.strParts = [];
    this.strRaw = [];
    this.strLength = 0;
    if (this.stringIsKey) {
      const top = this.stack.at(-1);
      if (top?.kind !== 'object') throw new JsonStreamError('malformed', 'key outside an object');
      top.key = s;
      top.state = 'colon';
      return;
    }
    this.afterValue(s, false);
  }

  private finishLiteral(): void {
    const lit = this.literal;
    this.literal = '';
    let v: unknown;
    try {
      v = JSON.parse(lit);
    } catch {
      throw new JsonStreamError('malformed', `bad literal: ${lit}`);
    }
    this.afterValue(v, false);
  }

  private currentPathMatches(): boolean {
    const target = this.options.streamField;
    if (target.length !== this.stack.length) return false;
    for (let d = 0; d < this.stack.length; d++) {
      const f = this.stack[d] as Frame;
      const seg = f.kind === 'object' ? f.key : f.value.length;
      if (seg !== target[d]) return false;
    }
    return true;
  }

  private startValue(c: string): void {
    if (this.done) throw new JsonStreamError('malformed', `unexpected ${JSON.stringify(c)} after the end of the value`);
    if (c === '"') {
      this.inString = true;
      this.stringIsKey = false;
      this.streaming = this.currentPathMatches();
      return;
    }
    if (c === '{' || c === '[') {
      if (this.stack.length >= MAX_DEPTH) throw new JsonStreamError('malformed', 'nesting too deep');
      this.stack.push(
        c === '{' ? { kind: 'object', value: {}, key: null, state: 'keyOrEnd' } : { kind: 'array', value: [], state: 'valueOrEnd' },
      );
      return;
    }
    if (/[-0-9tfn]/.test(c)) {
      this.literal = c;
      return;
    }
    throw new JsonStreamError('malformed', `unexpected ${JSON.stringify(c)}`);
  }

  /** After each piece: what one piece adds past a limit is bounded by the piece. */
  private checkKept(): void {
    const max = this.options.maxKept;
    if (!max) return;
    if (this.keptChars > max.chars)
      throw new JsonStreamError('kept-chars', `more than ${max.chars} bytes of the body beside its streamed field`);
    if (this.keptValues > max.values) throw new JsonStreamError('kept-values', `more than ${max.values} values beside its streamed field`);
  }

  private afterValue(v: unknown, streamed: boolean): void {
    if (!streamed) this.keptValues++;
    const top = this.stack.at(-1);
    if (!top) {
      this.root = v;
      this.done = true;
      return;
    }
    if (top.kind === 'object') {
      if (!streamed && top.key !== null) top.value[top.key] = v;
      top.state = 'commaOrEnd';
    } else {
      top.value.push(v);
      top.state = 'commaOrEnd';
    }
  }

  private structural(c: string): void {
    const top = this.stack.at(-1);
    if (!top) return this.startValue(c);
    if (top.kind === 'object') {
      switch (top.state) {
        case 'keyOrEnd':
        case 'key':
          if (c === '"') {
            this.inString = true;
            this.stringIsKey = true;
            this.streaming = false;
            return;
          }
          if (c === '}' && top.state === 'keyOrEnd') return this.closeContainer();
          throw new JsonStreamError('malformed', `expected a key, got ${JSON.stringify(c)}`);
        case 'colon':
          if (c !== ':') throw new JsonStreamError('malformed', `expected ':', got ${JSON.stringify(c)}`);
          top.state = 'value';
          return;
        case 'value':
          return this.startValue(c);
        case 'commaOrEnd':
          if (c === ',') {
            top.state = 'key';
            top.key = null;
            return;
          }
          if (c === '}') return this.closeContainer();
          throw new JsonStreamError('malformed', `expected ',' or '}', got ${JSON.stringify(c)}`);
      }
    }
    switch (top.state) {
      case 'valueOrEnd':
        if (c === ']') return this.closeContainer();
        return this.startValue(c);
      case 'value':
        return this.startValue(c);
      case 'commaOrEnd':
        if (c === ',') {
          top.state = 'value';
          return;
        }
        if (c === ']') return this.closeContainer();
        throw new JsonStreamError('malformed', `expected ',' or ']', got ${JSON.stringify(c)}`);
    }
  }

  private closeContainer(): void {
    const f = this.stack.pop() as Frame;
    this.afterValue(f.value, false);
  }
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Reads a whole JSON body from `source`, streaming the designated string field to `onChunk`.
 *
 * Bytes reach the parser as latin1 (one character per byte, a plain copy) rather than through a
 * UTF-8 decoder, which was a fifth of a large download's CPU: JSON's structure is ASCII, the
 * streamed base64 field is ASCII, and the other strings are decoded as UTF-8 when they end (so a
 * character split across chunks is still whole).
 */
export async function readJsonStreaming(
  source: AsyncIterable<Uint8Array | string>,
  options: StreamingJsonOptions,
): Promise<{ value: unknown; streamedFieldSeen: boolean }> {
  const parser = new StreamingJsonParser(options);
  for await (const chunk of source) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    await parser.write(bytes.toString('latin1'));
  }
  return parser.end();
}
