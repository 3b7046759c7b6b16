/**
 * One `ParcelDownload` answer decoded into the destination while it arrives (`ContentBase64String`
 * is read when `Content` is absent). The content stops at the first byte past its cap — the least
 * of the listed size, the `Bytes` the answer declared before the content, and
 * `api.limits.maxParcelBytes` — and everything else in the answer is bounded like any answer.
 * Verified afterwards: base64, completeness, the declared and the listed size, the parcel id.
 */
import { createHash } from 'node:crypto';
import type { Writable } from 'node:stream';
import { Base64Decoder, InvalidBase64Error, maxDecodedLength } from '@gridsync/protocol/encoding';
import { admitContent, contentCap, type ClientLimits } from '../core.js';
import { ContentIntegrityError, DownloadRoomError, GridLimitError, GridResponseError, GridTransportError } from '../errors.js';
import { toTransportError, type RawResponse } from '../http.js';
import type { DownloadResultInfo } from '../transport.js';
import { answerBounds, checkPayload, decodeResult, readFailure } from './answer.js';
import type { Rec } from './records.js';
import { type OperationDef, SoapLimitError, SoapXmlError, child, readXml, type XmlNode } from '@gridsync/protocol/soap';

const CONTENT_OUT: ReadonlySet<string> = new Set(['Content', 'ContentBase64String']);
/** Base64 characters decoded per slab (a multiple of 4). */
const SLAB_CHARS = 256 * 1024;

export interface ReceiveOptions {
  readonly parcelId: number;
  /** The size the list declared. */
  readonly expectedBytes?: number | undefined;
  readonly limits: ClientLimits;
  /** The destination's room (DownloadOptions.roomBytes). */
  readonly roomBytes?: number | undefined;
  /** Called with the running count of decoded bytes written. */
  readonly onWritten: (bytes: number) => void;
}

/**
 * Decodes a 200 answer into `writable` (neither ended nor closed). The decode buffer is reused
 * once the writable's write callback has fired (a file stream is done with it by then).
 */
export async function receiveParcel(
  def: OperationDef,
  res: RawResponse,
  writable: Writable,
  options: ReceiveOptions,
): Promise<DownloadResultInfo> {
  const { parcelId } = options;
  const decoder = new Base64Decoder();
  const hash = createHash('sha256');
  const slab = Buffer.allocUnsafe(maxDecodedLength(SLAB_CHARS));
  let written = 0;
  let element: string | undefined;
  let cap = contentCap(options.limits.maxParcelBytes, options.expectedBytes);
  const onStream = async (text: string, name: string, parent: XmlNode): Promise<void> => {
    if (element === undefined) {
      element = name;
      cap = contentCap(cap, declaredBytes(parent));
    }
    if (name !== element) return; // both forms filled: the first one counts
    const clean = /\s/.test(text) ? text.replace(/\s+/g, '') : text;
    for (let i = 0; i < clean.length; i += SLAB_CHARS) {
      const buf = decoder.push(clean.slice(i, i + SLAB_CHARS), slab);
      if (buf.length === 0) continue;
      admitContent(def.name, parcelId, written, buf.length, { cap, roomBytes: options.roomBytes });
      hash.update(buf);
      written += buf.length;
      options.onWritten(written);
      // The slab is reused: wait until the writable is done with it.
      await new Promise<void>((resolve, reject) => writable.write(buf, (err) => (err ? reject(err) : resolve())));
    }
  };
  let root: XmlNode;
  try {
    root = await readXml(res.body, { ...answerBounds(options.limits), streamElements: CONTENT_OUT, onStream });
    decoder.end();
  } catch (err) {
    res.body.destroy();
    throw failure(def, parcelId, err, options.limits);
  }
  const info = decodeResult(def, checkPayload(def, res.statusCode, root)) as Rec | null;
  if (!info) throw new GridResponseError(def.name, 200, 'ParcelDownloadResult', 'missing');
  const declared = typeof info.Bytes === 'number' ? info.Bytes : undefined;
  if (element === undefined && declared !== 0) throw new GridResponseError(def.name, 200, 'ParcelDownloadResult/Content', 'missing');
  for (const [what, n] of [
    ['declared', declared],
    ['listed', options.expectedBytes],
  ] as const) {
    if (n !== undefined && n !== decoder.bytes)
      throw new ContentIntegrityError(def.name, parcelId, 'byte-mismatch', `decoded ${decoder.bytes} bytes, ${what} ${n}`);
  }
  if (info.ParcelID !== undefined && String(info.ParcelID) !== String(parcelId))
    throw new GridResponseError(def.name, 200, 'ParcelDownloadResult/ParcelID', `asked for ${parcelId}, got ${String(info.ParcelID)}`);
  return {
    parcelId,
    fileName: typeof info.FileName === 'string' ? info.FileName : null,
    bytes: decoder.bytes,
    ...(declared !== undefined ? { declaredBytes: declared } : {}),
    sha256: hash.digest('hex'),
  };
}

/** `Bytes` as read before the content, when it came first and is a plain count. */
function declaredBytes(parent: XmlNode): number | undefined {
  const text = parent && child(parent, 'Bytes')?.text.trim();
  return text && /^\d{1,10}$/.test(text) ? Number(text) : undefined;
}

function failure(def: OperationDef, parcelId: number, err: unknown, limits: ClientLimits): Error {
  if (err instanceof ContentIntegrityError || err instanceof DownloadRoomError || err instanceof GridLimitError) return err;
  if (err instanceof InvalidBase64Error)
    return new ContentIntegrityError(def.name, parcelId, 'invalid-base64', err.message, { cause: err });
  if (err instanceof SoapLimitError) return readFailure(def.name, 200, err, limits);
  if (err instanceof SoapXmlError)
    return new ContentIntegrityError(def.name, parcelId, err.truncated ? 'truncated' : 'malformed', err.message, { cause: err });
  // The service answered 200 and the body broke off: a truncated answer, whether or not a content
  // byte was decoded yet (data buffered when the socket failed is discarded by the stream, so
  // "nothing written" does not mean "nothing sent"). Retried like any truncation.
  const e = toTransportError(def.name, err);
  if (e instanceof GridTransportError)
    return new ContentIntegrityError(def.name, parcelId, 'truncated', `the body broke off: ${e.message}`, { cause: e });
  return e;
}
