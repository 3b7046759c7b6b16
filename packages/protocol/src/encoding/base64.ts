/**
 * Incremental base64 for parcel content, both ways, shared by the client and the emulator.
 *
 * Strict on decode because Node is not: `Buffer.from('@@@!!!', 'base64')` is 0 bytes without an
 * error, and a truncated string silently gives fewer bytes (docs/testing.md). The decoder
 * accepts only the standard alphabet, `=` padding only at the very end, and a total length that is
 * a multiple of 4; anything else is an InvalidBase64Error, so a damaged parcel is never placed.
 */
import { GridsyncError } from '../errors/index.js';

/** The text is not canonical standard base64 (alphabet, padding, length). */
export class InvalidBase64Error extends GridsyncError {
  readonly code = 'GRID_INVALID_BASE64';
  constructor(
    message: string,
    /** Offset in the base64 text where the problem was found. */
    readonly offset: number,
  ) {
    super(message);
  }
}

const NOT_ALPHABET = /[^A-Za-z0-9+/]/;

export class Base64Decoder {
  private carry = '';
  private consumed = 0;
  private padded = false;
  /** Decoded bytes so far. */
  bytes = 0;

  /**
   * Decode the next piece of text; returns the bytes it completes (possibly empty). With `into`,
   * the bytes are written there (it must hold `maxDecodedLength(text.length)`) and a view of it is
   * returned: no new allocation per chunk.
   */
  push(text: string, into?: Buffer): Buffer {
    if (text.length === 0) return EMPTY;
    if (this.padded) throw new InvalidBase64Error('data after the base64 padding', this.consumed);
    const s = this.carry + text;
    const pad = s.indexOf('=');
    if (pad !== -1) {
      const tail = s.slice(pad);
      if (!/^={1,2}$/.test(tail) || s.length % 4 !== 0) {
        throw new InvalidBase64Error('misplaced "=" padding in base64', this.consumed - this.carry.length + pad);
      }
      this.padded = true;
    }
    const whole = this.padded ? s.length : s.length - (s.length % 4);
    const complete = s.slice(0, whole);
    this.carry = s.slice(whole);
    const start = this.consumed - (s.length - text.length);
    this.consumed += text.length;
    if (complete.length === 0) return EMPTY;
    // Validate by the decoded length rather than a regex over every character (the regex was half of
    // the download's CPU time): Node skips characters outside the alphabet, so any of them makes the
    // output shorter; '-' and '_' (the URL-safe alphabet, which Node accepts) are looked for directly.
    const out = into ? into.subarray(0, into.write(complete, 0, 'base64')) : Buffer.from(complete, 'base64');
    const padding = this.padded ? s.length - pad : 0;
    if (out.length !== (complete.length / 4) * 3 - padding || complete.includes('-') || complete.includes('_')) {
      const bad = NOT_ALPHABET.exec(pad === -1 ? complete : complete.slice(0, pad));
      throw new InvalidBase64Error(`invalid base64 character ${JSON.stringify(bad?.[0] ?? '?')}`, start + (bad?.index ?? 0));
    }
    this.bytes += out.length;
    return out;
  }

  /** The end of the text: the total length must have been a multiple of 4. */
  end(): void {
    if (this.carry.length !== 0) {
      throw new InvalidBase64Error(`base64 text ends with ${this.carry.length} stray character(s): truncated or unpadded`, this.consumed);
    }
  }
}

const EMPTY = Buffer.alloc(0);

/** Encodes bytes piecewise; the concatenated output equals `Buffer.toString('base64')` of the whole. */
export class Base64Encoder {
  private carry: Buffer = EMPTY;

  push(chunk: Uint8Array): string {
    const buf =
      this.carry.length === 0 ? Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength) : Buffer.concat([this.carry, chunk]);
    const whole = buf.length - (buf.length % 3);
    this.carry = Buffer.from(buf.subarray(whole));
    return buf.toString('base64', 0, whole);
  }

  end(): string {
    const s = this.carry.toString('base64');
    this.carry = EMPTY;
    return s;
  }
}

/** Upper bound of the bytes one `push(text)` can return (the carried characters included). */
export const maxDecodedLength = (textLength: number): number => Math.ceil((textLength + 3) / 4) * 3;

/** Exact length of the base64 text for `bytes` bytes (with padding). */
export const base64Length = (bytes: number): number => Math.ceil(bytes / 3) * 4;
