/**
 * What one attempt put on the wire and got back (method, HTTP status), told by the HTTP channel to
 * the attempt loop that started it: the loop's debug line for a request is then the same for REST
 * and SOAP, without either protocol passing it along. Only names and numbers, never a path: a
 * path may carry an id or a token.
 */
export interface AttemptRecord {
  method?: string;
  status?: number;
}

/**
 * Each attempt's requests carry a signal of its own (attempt-limits.ts): the record is found by it.
 * Not an AsyncLocalStorage: on Node 20 one in use puts hooks on every promise of the process, and
 * those hooks (with the garbage they leave) cost more CPU per parcel than the debug line is worth.
 */
const records = new WeakMap<AbortSignal, AttemptRecord>();

/** From now on the requests sent with `signal` report to `record`. */
export function recordAttemptOn(signal: AbortSignal, record: AttemptRecord): void {
  records.set(signal, record);
}

/** Called by the HTTP channel: the request sent (its method), then the answer's status. */
export function noteRequest(signal: AbortSignal | undefined, method: string, status?: number): void {
  const r = signal && records.get(signal);
  if (!r) return;
  r.method = method;
  if (status !== undefined) r.status = status;
}
