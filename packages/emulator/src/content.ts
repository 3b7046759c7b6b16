/**
 * Parcel content in the content directory (one file per parcel, named in the store): received from a
 * streamed JSON body, stored from a buffer, discarded, its first bytes read back, and sent
 * base64-encoded while it is sent — never a whole large parcel in memory.
 */
import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  Base64Decoder,
  Base64Encoder,
  InvalidBase64Error,
  base64Length,
  JsonStreamError,
  readJsonStreaming,
} from '@gridsync/protocol/encoding';
import { boundedBody, maxUploadRequestBytes } from './request-body.js';
import { invalidParameter, type World } from './context.js';
import type { FaultPlan } from './faults.js';
import type { ParcelRow } from './store.js';

export const HEAD_BYTES = 4096;

export interface StoredContent {
  /** File name in the content directory. */
  readonly name: string;
  readonly bytes: number;
  readonly sha256: string;
  /** First bytes, for routing by envelope. */
  readonly head: Buffer;
  /** The whole content when it is small (already in memory): no second read to scan it. */
  readonly data?: Buffer;
}

/**
 * Content up to this size is kept in memory while it arrives and written with one call, and sent
 * from one read: a stream per small parcel (open, writes and close on the thread pool) cost more
 * CPU than the rest of the request.
 */
const SMALL_CONTENT = 256 * 1024;

/**
 * Streams a JSON body with a base64 `content` field into a content file (decoded, hashed,
 * counted), and returns the other fields. Whitespace inside the base64 is tolerated (docs/wire.md#limits);
 * anything else invalid is a 400.
 */
export async function receiveContentBody(
  world: World,
  req: IncomingMessage,
  maxBytes: number,
): Promise<{ fields: Record<string, unknown>; content: StoredContent | undefined }> {
  const name = `tmp-${randomUUID()}`;
  const file = world.store.contentPath(name);
  // Small content stays in memory and is written with one call at the end; past SMALL_CONTENT it
  // goes to a stream from then on.
  let small: Buffer[] | undefined = [];
  let smallBytes = 0;
  let out: fs.WriteStream | undefined;
  // A write still in flight when the request breaks off fails after destroy(): without a listener
  // that 'error' event would be an uncaught exception and end the process.
  let writeError: Error | undefined;
  const openStream = (): fs.WriteStream => {
    const stream = fs.createWriteStream(file);
    stream.on('error', (err) => {
      writeError ??= err;
    });
    for (const b of small ?? []) stream.write(b);
    small = undefined;
    return stream;
  };
  const decoder = new Base64Decoder();
  const hash = createHash('sha256');
  const head: Buffer[] = [];
  let headBytes = 0;
  const write = async (buf: Buffer): Promise<void> => {
    if (buf.length === 0) return;
    if (decoder.bytes > maxBytes) throw invalidParameter(`content: larger than the maximum parcel size of ${maxBytes} bytes`);
    hash.update(buf);
    if (headBytes < HEAD_BYTES) {
      head.push(buf.subarray(0, HEAD_BYTES - headBytes));
      headBytes += Math.min(buf.length, HEAD_BYTES - headBytes);
    }
    if (small && smallBytes + buf.length <= SMALL_CONTENT) {
      small.push(buf);
      smallBytes += buf.length;
      return;
    }
    out ??= openStream();
    const stream = out;
    if (writeError) throw writeError;
    if (!stream.write(buf)) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          stream.off('drain', done);
          stream.off('close', done);
          resolve();
        };
        stream.on('drain', done);
        stream.on('close', done);
      });
      if (writeError) throw writeError;
    }
  };
  try {
    const parsed = await readJsonStreaming(boundedBody(req, { maxBytes: maxUploadRequestBytes(maxBytes) }), {
      streamField: ['content'],
      onChunk: (text) => write(decoder.push(/\s/.test(text) ? text.replace(/\s+/g, '') : text)),
    });
    if (parsed.streamedFieldSeen) decoder.end();
    let data: Buffer | undefined;
    if (out) {
      const stream = out;
      await new Promise<void>((resolve, reject) => stream.end((err?: Error | null) => (err ? reject(err) : resolve())));
    } else {
      data = Buffer.concat(small ?? [], smallBytes);
      fs.writeFileSync(file, data);
    }
    const fields =
      parsed.value && typeof parsed.value === 'object' && !Array.isArray(parsed.value)
        ? (parsed.value as Record<string, unknown>)
        : undefined;
    if (!fields) throw invalidParameter('body: must be a JSON object');
    if (!parsed.streamedFieldSeen) {
      fs.rmSync(file, { force: true });
      return { fields, content: undefined };
    }
    return {
      fields,
      content: { name, bytes: decoder.bytes, sha256: hash.digest('hex'), head: Buffer.concat(head), ...(data ? { data } : {}) },
    };
  } catch (err) {
    // The stream opens its file asynchronously: removing it before the stream is closed could
    // leave a file created after the removal.
    const stream = out;
    if (stream) {
      await new Promise<void>((resolve) => {
        if (stream.closed) return resolve();
        stream.once('close', () => resolve());
        stream.destroy();
      });
    }
    fs.rmSync(file, { force: true });
    if (err instanceof InvalidBase64Error) throw invalidParameter(`content: ${err.message}`);
    if (err instanceof JsonStreamError) throw invalidParameter(`body: ${err.message}`);
    throw err;
  }
}

export function discardContent(world: World, content: StoredContent | undefined): void {
  if (content) fs.rmSync(world.store.contentPath(content.name), { force: true });
}

/** Puts small content (injections, acknowledgments) into the content directory. */
export function storeBuffer(world: World, buf: Buffer): StoredContent {
  const name = `tmp-${randomUUID()}`;
  fs.writeFileSync(world.store.contentPath(name), buf);
  return { name, bytes: buf.length, sha256: createHash('sha256').update(buf).digest('hex'), head: buf.subarray(0, HEAD_BYTES) };
}

export function readHead(world: World, name: string): Buffer {
  const fd = fs.openSync(world.store.contentPath(name), 'r');
  try {
    const head = Buffer.alloc(HEAD_BYTES);
    return head.subarray(0, fs.readSync(fd, head, 0, HEAD_BYTES, 0));
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Sends `prefix`, the content file base64-encoded while it is sent, and `suffix`. Content-Length
 * is exact, so a truncated body is detectable by the client; the fault plan may cut the body halfway.
 */
export async function sendBase64Body(
  res: ServerResponse,
  body: { readonly type: string; readonly prefix: string; readonly suffix: string; readonly file: string; readonly bytes: number },
  plan: FaultPlan | undefined,
): Promise<void> {
  const { prefix, suffix } = body;
  const length = Buffer.byteLength(prefix) + base64Length(body.bytes) + Buffer.byteLength(suffix);
  res.writeHead(200, { 'content-type': body.type, 'content-length': String(length) });
  const breakAt = plan && (plan.truncate || plan.resetDuringBody) ? Math.floor(length / 2) : Number.POSITIVE_INFINITY;
  let sent = 0;
  const send = async (text: string): Promise<boolean> => {
    if (sent + text.length > breakAt) {
      res.write(text.slice(0, Math.max(0, breakAt - sent)));
      if (plan?.resetDuringBody) res.socket?.resetAndDestroy();
      else res.socket?.destroySoon();
      return false;
    }
    sent += text.length;
    if (!res.write(text)) await new Promise((r) => res.once('drain', r));
    return true;
  };
  const encoder = new Base64Encoder();
  if (body.bytes <= SMALL_CONTENT && breakAt === Number.POSITIVE_INFINITY) {
    // One read and one write: the whole response is a few KB. (A body to cut takes the path
    // below, whose separate writes reach the socket before it is cut.)
    const data = fs.readFileSync(body.file);
    if (!(await send(prefix + encoder.push(data) + encoder.end() + suffix))) return;
    res.end();
    return;
  }
  if (!(await send(prefix))) return;
  for await (const chunk of fs.createReadStream(body.file, { highWaterMark: 192 * 1024 })) {
    if (res.destroyed) return;
    if (!(await send(encoder.push(chunk as Buffer)))) return;
  }
  if (!(await send(encoder.end() + suffix))) return;
  res.end();
}

/** The REST download response: the envelope around the parcel's content as a base64 string. */
export function streamDownload(world: World, p: ParcelRow, plan: FaultPlan): (res: ServerResponse) => Promise<void> {
  const declared = plan.wrongBytes ? p.bytes + 1 : p.bytes;
  const prefix = `{"success":true,"errorCode":null,"message":null,"data":{"parcelId":${p.parcel_id},"fileName":${JSON.stringify(p.file_name)},"bytes":${declared},"content":"`;
  const file = world.store.contentPath(p.content);
  return (res) => sendBase64Body(res, { type: 'application/json', prefix, suffix: '"}}', file, bytes: p.bytes }, plan);
}
