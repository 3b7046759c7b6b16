/**
 * Bounds on what a caller may send, shared by the REST and SOAP fronts: a request body is read
 * through `boundedBody`, which refuses a declared or actual size past the limit and — for XML —
 * more markup than any real envelope has, before the parser or a handler holds any of it. The
 * credential is checked before a body is read (REST: the headers; SOAP: the SessionID element,
 * which comes before any content), so an unauthenticated caller costs at most the bound.
 */
import type { IncomingMessage } from 'node:http';
import { base64Length } from '@gridsync/protocol/encoding';
import { EmulatorError } from './context.js';

/** A JSON request body (every REST endpoint but the upload). */
export const MAX_JSON_BYTES = 1024 * 1024;
/** Everything of a SOAP envelope but its content element: names, ids, dates. */
export const MAX_ENVELOPE_BYTES = 1024 * 1024;
/** Tags in a SOAP envelope: the largest operation has a few dozen; content (base64) has no `<`. */
export const MAX_ENVELOPE_TAGS = 2000;

/** The largest upload request (REST or SOAP): an envelope around `maxUploadBytes` of base64 with a line break every 76 characters. */
export function maxUploadRequestBytes(maxUploadBytes: number): number {
  const encoded = base64Length(maxUploadBytes);
  return MAX_ENVELOPE_BYTES + encoded + 2 * Math.ceil(encoded / 76);
}

/** A request refused for its size (400 InvalidParameter, as the service answers): the rest is never read. */
export class RequestTooLargeError extends EmulatorError {
  constructor(message: string) {
    super(400, 'InvalidParameter', message);
  }
}

export interface BodyLimits {
  readonly maxBytes: number;
  /** Most `<` characters in the body (XML); unlimited when omitted. */
  readonly maxTags?: number;
}

const LT = 0x3c;

/** The body's chunks, refused as soon as it is (or declares to be) larger than the limits. */
export async function* boundedBody(req: IncomingMessage, limits: BodyLimits): AsyncGenerator<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limits.maxBytes)
    throw new RequestTooLargeError(`body: larger than ${limits.maxBytes} bytes (${declared} declared)`);
  let bytes = 0;
  let tags = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    bytes += buf.length;
    if (bytes > limits.maxBytes) throw new RequestTooLargeError(`body: larger than ${limits.maxBytes} bytes`);
    if (limits.maxTags !== undefined) {
      for (let i = buf.indexOf(LT); i !== -1; i = buf.indexOf(LT, i + 1)) tags++;
      if (tags > limits.maxTags) throw new RequestTooLargeError(`body: more than ${limits.maxTags} elements`);
    }
    yield buf;
  }
}

/** A whole small body as text (JSON, form fields). */
export async function readBoundedText(req: IncomingMessage, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of boundedBody(req, { maxBytes })) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}
