/**
 * Streamed parcel transfer in both directions: a download's base64 `content` is decoded into the
 * destination while it arrives, an upload's file is encoded into the request body while it is
 * sent. Memory does not grow with the parcel size.
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import {
  Base64Decoder,
  Base64Encoder,
  InvalidBase64Error,
  base64Length,
  maxDecodedLength,
  JsonStreamError,
  readJsonStreaming,
} from '@gridsync/protocol/encoding';
import { maxAnswerValues } from './answer-shape.js';
import { admitContent, type BodyProgress, type ClientLimits, type ContentBounds } from './core.js';
import { apiErrorFrom } from './envelope.js';
import { ContentIntegrityError, GridLimitError, GridResponseError, GridTransportError, UploadSourceChangedError } from './errors.js';
import { toTransportError, type RawResponse } from './http.js';
import { readByteCount, readId, type ShapeWarnings } from './tolerant.js';
import { Envelope } from '@gridsync/protocol/wire';
import { FileCalls } from '../files/index.js';

export interface DownloadResultInfo {
  readonly parcelId: number;
  readonly fileName: string | null;
  /** Decoded byte count actually written. */
  readonly bytes: number;
  /** `bytes` (or `size`) as the response declared it. */
  readonly declaredBytes?: number;
  readonly sha256: string;
}

export interface UploadOptions {
  readonly fileName: string;
  readonly gridIdFrom?: number;
  readonly gridIdTo?: number;
  readonly mailboxId?: number;
  /** Send `bytes` for server-side verification. Default true. */
  readonly sendBytes?: boolean;
  /** The size the file was claimed with: a file of another size is refused before any byte is sent. */
  readonly expectedBytes?: number;
}

export interface ReceiveOptions {
  readonly endpoint: string;
  readonly parcelId: number;
  /** Byte count known from the list: verified too. */
  readonly expectedBytes?: number | undefined;
  /** Content beyond these is never written: the attempt stops at the first byte past them. */
  readonly bounds: ContentBounds;
  readonly signal?: AbortSignal | undefined;
  readonly now: number;
  readonly shapes: ShapeWarnings;
  /** Called with the running count of decoded bytes written. */
  readonly onWritten: (bytes: number) => void;
  /** What the answer beside its content may bring: `maxBodyBytes`, and the values of answer-shape.ts. */
  readonly limits: Pick<ClientLimits, 'maxBodyBytes' | 'maxListEntries'>;
}

/**
 * Decodes one 200 download answer into `writable` (neither ended nor closed: the caller fsyncs and
 * closes it). Verifies base64, completeness, the declared byte count and the parcel id.
 */
export async function receiveParcel(res: RawResponse, writable: Writable, options: ReceiveOptions): Promise<DownloadResultInfo> {
  const { endpoint, parcelId, signal } = options;
  const decoder = new Base64Decoder();
  const hash = createHash('sha256');
  // A parcel known to be small gets slabs of its size: 256 KB per download of a 5 KB parcel was
  // most of a burst's external memory, and so of its garbage collections.
  const slabs = new SlabPool(slabBytesFor(options.expectedBytes));
  let written = 0;
  const writeOut = async (text: string): Promise<void> => {
    const slab = await slabs.take(maxDecodedLength(text.length));
    const buf = decoder.push(text, slab);
    if (buf.length === 0) return slabs.give(slab);
    admitContent(endpoint, parcelId, written, buf.length, options.bounds);
    hash.update(buf);
    written += buf.length;
    options.onWritten(written);
    // The slab goes back to the pool once the writable is done with it (its write callback).
    if (!writable.write(buf, () => slabs.give(slab))) await once(writable, 'drain', signal ? { signal } : {});
  };
  let parsed: { value: unknown; streamedFieldSeen: boolean };
  try {
    parsed = await readJsonStreaming(res.body, {
      streamField: ['data', 'content'],
      onChunk: (text) => writeOut(text),
      maxKept: { chars: options.limits.maxBodyBytes, values: maxAnswerValues(options.limits) },
    });
    decoder.end();
  } catch (err) {
    res.body.destroy();
    throw downloadFailure(endpoint, parcelId, err, written > 0, options.limits);
  }
  const envelope = Envelope.safeParse(parsed.value);
  if (!envelope.success || !envelope.data.success) throw apiErrorFrom(endpoint, res, parsed.value, options.now);
  const data = (envelope.data.data ?? {}) as Record<string, unknown>;
  if (!parsed.streamedFieldSeen) throw new GridResponseError(endpoint, 200, 'data.content', 'missing');
  // Strict: the declared size (`bytes`, or `size` in one rendering) and the parcel id are acted on.
  const declaredField = data.bytes !== undefined && data.bytes !== null ? 'bytes' : 'size';
  const declared = readByteCount(data[declaredField]);
  if (declared === null)
    throw new GridResponseError(
      endpoint,
      200,
      `data.${declaredField}`,
      `not a byte count: ${JSON.stringify(data[declaredField])?.slice(0, 40)}`,
    );
  for (const [what, n] of [
    ['declared', declared],
    ['listed', options.expectedBytes],
  ] as const) {
    if (n !== undefined && n !== decoder.bytes) {
      throw new ContentIntegrityError(endpoint, parcelId, 'byte-mismatch', `decoded ${decoder.bytes} bytes, ${what} ${n}`);
    }
  }
  if (data.parcelId !== undefined && data.parcelId !== null) {
    const id = readId(data.parcelId);
    if (!id.ok || id.value !== parcelId)
      throw new GridResponseError(endpoint, 200, 'data.parcelId', `asked for ${parcelId}, got ${String(data.parcelId)}`);
  }
  let fileName: string | null = null;
  if (typeof data.fileName === 'string') fileName = data.fileName;
  else if (data.fileName !== undefined && data.fileName !== null)
    options.shapes.note(endpoint, 'data.fileName', `expected a string, got ${typeof data.fileName}`);
  return {
    parcelId,
    fileName,
    bytes: decoder.bytes,
    ...(declared !== undefined ? { declaredBytes: declared } : {}),
    sha256: hash.digest('hex'),
  };
}

function downloadFailure(endpoint: string, parcelId: number, err: unknown, wroteContent: boolean, limits: ReceiveOptions['limits']): Error {
  if (err instanceof InvalidBase64Error)
    return new ContentIntegrityError(endpoint, parcelId, 'invalid-base64', err.message, { cause: err });
  if (err instanceof JsonStreamError && err.reason === 'kept-chars')
    return new GridLimitError(endpoint, 'api.limits.maxBodyBytes', limits.maxBodyBytes, err.message);
  if (err instanceof JsonStreamError && err.reason === 'kept-values')
    return new GridLimitError(endpoint, 'api.limits.maxListEntries', limits.maxListEntries, `${err.message} (derived from the list limit)`);
  if (err instanceof JsonStreamError) {
    return new ContentIntegrityError(endpoint, parcelId, err.reason === 'truncated' ? 'truncated' : 'malformed', err.message, {
      cause: err,
    });
  }
  const e = toTransportError(endpoint, err);
  if (e instanceof GridTransportError && wroteContent) {
    return new ContentIntegrityError(endpoint, parcelId, 'truncated', `the body broke off: ${e.message}`, { cause: e });
  }
  return e;
}

/**
 * An upload's body, both protocols: the envelope's head, the file base64-encoded while it is read,
 * the envelope's tail. The file is opened afresh by each call; a file whose size changed fails
 * the request. The pieces are pulled as the connection takes them, so what `handed` counts moves
 * with the line, which the attempt's minimum rate holds it to.
 */
export function streamedBody(
  filePath: string,
  source: { size: number; chunks: () => AsyncIterable<Buffer> },
  envelope: { readonly head: string; readonly tail: string },
  progress: BodyProgress,
): () => AsyncGenerator<string> {
  return async function* () {
    let handed = 0;
    const hand = (piece: string): string => {
      handed += piece.length;
      progress.handed(handed);
      return piece;
    };
    yield hand(envelope.head);
    for await (const piece of encodedContent(filePath, source)) yield hand(piece);
    yield hand(envelope.tail);
    progress.sent();
  };
}

/** The REST upload request body (streamedBody) and its length. */
export async function uploadBody(
  filePath: string,
  upload: UploadOptions,
  progress: BodyProgress,
  calls: FileCalls = FileCalls.POOL,
): Promise<{ length: number; body: () => AsyncGenerator<string> }> {
  const source = await uploadSource(filePath, upload, calls);
  const size = source.size;
  const head: Record<string, unknown> = { fileName: upload.fileName };
  if (upload.sendBytes !== false) head.bytes = size;
  if (upload.gridIdFrom !== undefined) head.gridIdFrom = upload.gridIdFrom;
  if (upload.gridIdTo !== undefined) head.gridIdTo = upload.gridIdTo;
  if (upload.mailboxId !== undefined) head.mailboxId = upload.mailboxId;
  const prefix = `${JSON.stringify(head).slice(0, -1)},"content":"`;
  const suffix = '"}';
  const length = Buffer.byteLength(prefix) + base64Length(size) + suffix.length;
  return { length, body: streamedBody(filePath, source, { head: prefix, tail: suffix }, progress) };
}

/**
 * The file an upload sends, refused (UploadSourceChangedError, `notSent`) when its size is not the
 * one it was claimed with: a claimed copy cut short or grown since would otherwise reach the
 * partner as their document. Both protocols take their source here.
 */
export async function uploadSource(
  filePath: string,
  upload: Pick<UploadOptions, 'expectedBytes'>,
  calls: FileCalls,
): Promise<{ size: number; chunks: () => AsyncIterable<Buffer> }> {
  const source = await calls.source(filePath);
  if (upload.expectedBytes !== undefined && source.size !== upload.expectedBytes)
    throw new UploadSourceChangedError(
      filePath,
      `is ${source.size} bytes, not the ${upload.expectedBytes} bytes it was claimed with`,
      true,
    );
  return source;
}

/** A file's content base64-encoded as it is read; a file whose size changed since `source` fails. */
async function* encodedContent(filePath: string, source: { size: number; chunks: () => AsyncIterable<Buffer> }): AsyncGenerator<string> {
  const encoder = new Base64Encoder();
  let read = 0;
  for await (const chunk of source.chunks()) {
    read += chunk.length;
    yield encoder.push(chunk);
  }
  if (read !== source.size) throw new UploadSourceChangedError(filePath, `changed size during the upload (${source.size} → ${read} bytes)`);
  yield encoder.end();
}

const SLAB_BYTES = 256 * 1024;

/** Slabs big enough for the whole of a parcel of `expectedBytes` (at most the default slab). */
function slabBytesFor(expectedBytes: number | undefined): number {
  if (expectedBytes === undefined) return SLAB_BYTES;
  return Math.max(1, Math.min(SLAB_BYTES, maxDecodedLength(base64Length(expectedBytes))));
}

/**
 * A few reusable buffers for decoded content. Allocating a fresh Buffer per chunk made external
 * memory, and so peak RSS, climb by tens of MB before V8 collected them.
 */
class SlabPool {
  private readonly free: Buffer[] = [];
  private readonly waiting: (() => void)[] = [];
  private created = 0;

  constructor(
    private readonly slabBytes = SLAB_BYTES,
    private readonly max = 8,
  ) {}

  async take(minBytes: number): Promise<Buffer> {
    if (minBytes > this.slabBytes) return Buffer.allocUnsafe(minBytes);
    for (;;) {
      const slab = this.free.pop();
      if (slab) return slab;
      if (this.created < this.max) {
        this.created++;
        return Buffer.allocUnsafe(this.slabBytes);
      }
      await new Promise<void>((r) => this.waiting.push(r));
    }
  }

  give(slab: Buffer): void {
    if (slab.length !== this.slabBytes) return;
    this.free.push(slab);
    this.waiting.shift()?.();
  }
}
