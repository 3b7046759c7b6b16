/**
 * Reads a list answer `{ success, data: [ … ], … }` as it streams, keeping at most `maxItems`
 * records of `data` and only counting the rest. A pending list of a million parcels is then a
 * few hundred kilobytes of memory, not gigabytes, and never more than `maxItems` journal rows per
 * cycle. Works on bytes: every structural character is ASCII, so UTF-8 inside strings is never
 * mistaken for one; each kept record is decoded and parsed on its own.
 */
import type { JsonShapeBudget } from './answer-shape.js';
import { GridLimitError, GridResponseError } from './errors.js';

export interface ScannedList {
  /** Top-level members other than an array `data`, parsed (`success`, `errorCode`, `message`, …). */
  readonly members: Record<string, unknown>;
  /** The first `maxItems` records of `data`, parsed; undefined when `data` is not an array. */
  readonly items: unknown[] | undefined;
  /** How many records `data` held in all. */
  readonly total: number;
}

export interface ScanOptions {
  readonly endpoint: string;
  readonly maxItems: number;
  /**
   * Cap of all that is kept together (the records and the top-level members): records are
   * counted past `maxItems` without being kept, but the kept ones must not make a list cost more
   * than any other answer (`maxItems` records of up to this size each were all held and parsed).
   */
  readonly maxKeptBytes: number;
  /** What the kept records and members together may hold, counted before each is parsed. */
  readonly shape: JsonShapeBudget;
}

const WS = new Set([0x20, 0x0a, 0x0d, 0x09]);
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

export async function scanList(body: AsyncIterable<Uint8Array>, options: ScanOptions): Promise<ScannedList> {
  const members: Record<string, unknown> = {};
  const items: Buffer[] = [];
  let itemsSeen = 0;
  let dataIsArray = false;
  let depth = 0;
  let inString = false;
  let escaped = false;
  let expectKey = false; // at depth 1: the next string is a member name
  let key: Buffer[] | undefined; // bytes of the member name being read
  let keyLength = 0;
  let memberName = '';
  let inListData = false; // inside the array of `data`
  let capture: Buffer[] | undefined; // bytes of the value being kept
  let captureLength = 0;
  /** Bytes of the values kept so far, the one being captured aside. */
  let keptBytes = 0;
  let captureKind: 'member' | 'item' | undefined;
  let elementOpen = false;
  let started = false;

  const finishCapture = (): void => {
    const raw = Buffer.concat(capture ?? []);
    keptBytes += raw.length;
    const text = raw.toString('utf8').trim();
    options.shape.check(text, captureKind === 'item' ? `data[${items.length}]` : memberName);
    if (captureKind === 'item') items.push(Buffer.from(text));
    else if (captureKind === 'member') {
      try {
        members[memberName] = JSON.parse(text);
      } catch {
        throw new GridResponseError(options.endpoint, 200, memberName, 'not valid JSON');
      }
    }
    capture = undefined;
    captureKind = undefined;
    captureLength = 0;
  };

  const overKept = (): never => {
    throw new GridLimitError(
      options.endpoint,
      'api.limits.maxBodyBytes',
      options.maxKeptBytes,
      `the records, values and member names kept of the answer exceed ${options.maxKeptBytes} bytes`,
    );
  };

  for await (const chunk of body) {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
    // A value or a member name carried over from the last chunk goes on from this one's start.
    let captureFrom = capture || key ? 0 : -1;
    for (let i = 0; i < buf.length; i++) {
      const c = buf[i]!;
      if (inString) {
        if (escaped) escaped = false;
        else if (c === BACKSLASH) escaped = true;
        else if (c === QUOTE) {
          inString = false;
          if (key) {
            key.push(buf.subarray(captureFrom < 0 ? 0 : captureFrom, i));
            memberName = Buffer.concat(key).toString('utf8');
            keptBytes += keyLength;
            key = undefined;
            keyLength = 0;
            captureFrom = -1;
          }
        }
        continue;
      }
      if (WS.has(c)) continue;
      if (!started) {
        if (c !== 0x7b) throw new GridResponseError(options.endpoint, 200, '(body)', 'not a JSON object');
        started = true;
        depth = 1;
        expectKey = true;
        continue;
      }
      // A value starts at depth 1 (a member) or at depth 2 inside `data` (a record).
      if (depth === 1 && !expectKey && !capture && c !== 0x3a && c !== 0x2c && c !== 0x7d) {
        if (memberName === 'data' && c === 0x5b) {
          dataIsArray = true;
          inListData = true;
          depth = 2;
          elementOpen = false;
          continue;
        }
        capture = [];
        captureKind = 'member';
        captureFrom = i;
      } else if (inListData && depth === 2 && !elementOpen && c !== 0x2c && c !== 0x5d) {
        elementOpen = true;
        itemsSeen++;
        if (itemsSeen <= options.maxItems) {
          capture = [];
          captureKind = 'item';
          captureFrom = i;
        }
      }
      if (c === QUOTE) {
        inString = true;
        if (depth === 1 && expectKey) {
          key = [];
          captureFrom = i + 1;
          expectKey = false;
        }
        continue;
      }
      if (c === 0x7b || c === 0x5b) {
        depth++;
        continue;
      }
      const closes = c === 0x7d || c === 0x5d;
      const separates = c === 0x2c;
      if (inListData && depth === 2 && (separates || closes)) {
        if (capture && captureKind === 'item') {
          capture.push(buf.subarray(captureFrom, i));
          finishCapture();
          captureFrom = -1;
        }
        elementOpen = false;
        if (closes) {
          inListData = false;
          depth = 1;
        }
        continue;
      }
      if (depth === 1 && (separates || closes)) {
        if (capture && captureKind === 'member') {
          capture.push(buf.subarray(captureFrom, i));
          finishCapture();
          captureFrom = -1;
        }
        if (separates) expectKey = true;
        else depth = 0;
        continue;
      }
      if (closes) depth--;
    }
    if (capture && captureFrom >= 0) {
      const piece = buf.subarray(captureFrom);
      captureLength += piece.length;
      if (keptBytes + captureLength > options.maxKeptBytes) overKept();
      capture.push(Buffer.from(piece));
    } else if (key && captureFrom >= 0) {
      const piece = buf.subarray(captureFrom);
      keyLength += piece.length;
      if (keptBytes + keyLength > options.maxKeptBytes) overKept();
      key.push(Buffer.from(piece));
    }
  }
  if (depth !== 0 || inString) throw new GridResponseError(options.endpoint, 200, '(body)', 'the answer ended early');
  const parsed: unknown[] = [];
  items.forEach((b, n) => {
    try {
      parsed.push(JSON.parse(b.toString('utf8')));
    } catch {
      throw new GridResponseError(options.endpoint, 200, `data[${n}]`, 'not valid JSON');
    }
  });
  return { members, items: dataIsArray ? parsed : undefined, total: itemsSeen };
}
