/**
 * Decoding of the response envelope `{ success, data, errorCode, message }` and of error bodies
 * that are not the envelope (problem-details, a proxy's HTML page). Turns every answer into either
 * the endpoint's validated `data` or a typed error.
 */
import type { EndpointDef } from '@gridsync/protocol/catalog';
import { JsonShapeBudget } from './answer-shape.js';
import type { ClientLimits } from './core.js';
import { GridApiError, GridLimitError, GridResponseError } from './errors.js';
import { toTransportError, type RawResponse } from './http.js';
import { parseRetryAfter } from './retry.js';
import { Envelope } from '@gridsync/protocol/wire';

/** Error bodies are read up to this size: enough for any message, not for a hostile stream. */
export const MAX_ERROR_BODY = 64 * 1024;

/** Dotted path of a zod issue: `data[3].parcelId`. */
export function issuePath(prefix: string, path: readonly PropertyKey[]): string {
  return path.reduce<string>((acc, seg) => (typeof seg === 'number' ? `${acc}[${seg}]` : `${acc}.${String(seg)}`), prefix);
}

export interface ReadEnvelopeOptions {
  readonly name: string;
  readonly now: number;
  /**
   * `maxBodyBytes`: cap of a successful answer's body, larger is refused (GridLimitError), never
   * buffered; `maxListEntries`: what the answer's values are counted against (answer-shape.ts).
   */
  readonly limits: Pick<ClientLimits, 'maxBodyBytes' | 'maxListEntries'>;
}

/** Reads a (small) JSON body and returns the validated `data`, or throws the right typed error. */
export async function readEnvelope(endpoint: EndpointDef | undefined, res: RawResponse, options: ReadEnvelopeOptions): Promise<unknown> {
  const { name } = options;
  let text: string;
  let over: boolean;
  const limit = res.statusCode >= 400 ? MAX_ERROR_BODY : options.limits.maxBodyBytes;
  try {
    ({ text, over } = await readLimited(res.body, limit));
  } catch (err) {
    throw toTransportError(name, err);
  }
  if (res.statusCode < 400 && over) {
    throw new GridLimitError(name, 'api.limits.maxBodyBytes', limit, `the answer is larger than ${limit} bytes`);
  }
  // An error body is small (MAX_ERROR_BODY) and what it says must not be lost to its shape.
  if (res.statusCode < 400) new JsonShapeBudget(name, options.limits).check(text, '(body)');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    if (res.statusCode >= 400) throw apiErrorFrom(name, res, undefined, options.now, text);
    throw new GridResponseError(name, res.statusCode, '(body)', text.length === 0 ? 'empty body' : `not JSON: ${text.slice(0, 80)}`);
  }
  const envelope = Envelope.safeParse(json);
  if (!envelope.success || res.statusCode >= 400 || !envelope.data.success) {
    if (res.statusCode < 400 && !envelope.success) {
      const issue = envelope.error.issues[0];
      throw new GridResponseError(name, res.statusCode, issuePath('(envelope)', issue?.path ?? []), issue?.message ?? 'not the envelope');
    }
    throw apiErrorFrom(name, res, json, options.now);
  }
  if (!endpoint) return envelope.data.data;
  const data = endpoint.response.safeParse(envelope.data.data ?? null);
  if (!data.success) {
    const issue = data.error.issues[0];
    throw new GridResponseError(name, res.statusCode, issuePath('data', issue?.path ?? []), issue?.message ?? 'does not match');
  }
  return data.data;
}

/** A GridApiError from an error answer, whatever its body: the envelope, problem-details, or text. */
export function apiErrorFrom(name: string, res: RawResponse, json: unknown, now: number, text?: string): GridApiError {
  const retryAfterMs = parseRetryAfter(res.headers['retry-after'], now);
  const o = (json && typeof json === 'object' ? json : {}) as Record<string, unknown>;
  // Not every error body is the envelope (a proxy page, problem-details): fall back to the status.
  const errorCode = typeof o.errorCode === 'string' && o.errorCode !== '' ? o.errorCode : null;
  const message =
    typeof o.message === 'string'
      ? o.message
      : typeof o.detail === 'string'
        ? o.detail
        : typeof o.title === 'string'
          ? o.title
          : (text ?? '').slice(0, 200).trim();
  return new GridApiError(name, res.statusCode, errorCode, message, retryAfterMs);
}

/** Reads at most `limit` bytes of a body; `over` tells that more was coming (the rest is not read). */
export async function readLimited(
  body: AsyncIterable<Uint8Array> & { destroy(): void },
  limit: number,
): Promise<{ text: string; over: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > limit) {
      chunks.push(Buffer.from(chunk).subarray(0, chunk.byteLength - (size - limit)));
      body.destroy();
      return { text: Buffer.concat(chunks).toString('utf8'), over: true };
    }
    chunks.push(Buffer.from(chunk));
  }
  return { text: Buffer.concat(chunks).toString('utf8'), over: false };
}
