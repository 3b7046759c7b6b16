/**
 * How many values an answer may hold and how deeply they may nest, whatever its protocol. Bytes
 * alone do not bound what an answer costs once parsed: `api.limits.maxBodyBytes` of JSON made of
 * tiny members (`{"a":1,"b":1,…}`, 2.5 million keys) took ~280 MB of heap and seconds of CPU, and
 * the same bytes of nested brackets (`[[[[…`) took ~1 GB and killed `once` with a 256 MB heap.
 * The SOAP reader counts elements against the same budget (soap/answer.ts); a JSON answer, or the
 * kept part of a streamed list, is counted here on its text before it is parsed.
 */
import type { ClientLimits } from './core.js';
import { GridLimitError, GridResponseError } from './errors.js';

/** Values a list record may bring (a parcel with its interchanges, partners and log). */
const VALUES_PER_RECORD = 128;
/** Values of an answer besides its list records. */
const VALUES_BESIDES = 4096;
/** Nesting of an answer: the service's go a few levels deep. */
export const MAX_ANSWER_DEPTH = 64;

/** The values (JSON members and elements, XML elements) one answer may hold under `limits`. */
export function maxAnswerValues(limits: Pick<ClientLimits, 'maxListEntries'>): number {
  return limits.maxListEntries * VALUES_PER_RECORD + VALUES_BESIDES;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;

/**
 * Counts the members and elements of JSON texts against one answer's budget, before they are
 * parsed. Not a validator: malformed text is left to JSON.parse. Throws GridLimitError past the
 * budget, GridResponseError past MAX_ANSWER_DEPTH.
 */
export class JsonShapeBudget {
  private values = 0;
  private readonly max: number;

  constructor(
    private readonly endpoint: string,
    private readonly limits: Pick<ClientLimits, 'maxListEntries'>,
  ) {
    this.max = maxAnswerValues(limits);
  }

  /** Counts one whole JSON text (an answer, a member or a record of a list). */
  check(text: string, at: string): void {
    // Per level: whether it is an array still waiting for its first element.
    const emptyArray: boolean[] = [];
    const inArray: boolean[] = [];
    let depth = 0;
    let inString = false;
    let escaped = false;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (inString) {
        if (escaped) escaped = false;
        else if (c === BACKSLASH) escaped = true;
        else if (c === QUOTE) inString = false;
        continue;
      }
      if (c <= 0x20) continue;
      if (depth > 0 && emptyArray[depth - 1] && c !== CLOSE_ARRAY) {
        emptyArray[depth - 1] = false;
        this.count();
      }
      if (c === QUOTE) inString = true;
      else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
        if (++depth > MAX_ANSWER_DEPTH)
          throw new GridResponseError(this.endpoint, 200, at, `nested deeper than ${MAX_ANSWER_DEPTH} levels`);
        inArray[depth - 1] = c === OPEN_ARRAY;
        emptyArray[depth - 1] = c === OPEN_ARRAY;
      } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) depth = Math.max(0, depth - 1);
      else if (c === COLON || (c === COMMA && depth > 0 && inArray[depth - 1])) this.count();
    }
  }

  private count(): void {
    if (++this.values > this.max)
      throw new GridLimitError(
        this.endpoint,
        'api.limits.maxListEntries',
        this.limits.maxListEntries,
        `the answer holds more than ${this.max} values (derived from the list limit)`,
      );
  }
}
