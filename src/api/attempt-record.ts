/**
 * What one attempt put on the wire and got back (method, HTTP status), told by the HTTP channel to
 * the attempt loop that started it: the loop's debug line for a request is then the same for REST
 * and SOAP, without either protocol passing it along. Only names and numbers, never a path: a
 * path may carry an id or a token.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

export interface AttemptRecord {
  method?: string;
  status?: number;
}

const current = new AsyncLocalStorage<AttemptRecord>();

/** Runs one attempt with `record` as the place its requests report to. */
export function recordingAttempt<T>(record: AttemptRecord, attempt: () => Promise<T>): Promise<T> {
  return current.run(record, attempt);
}

/** Called by the HTTP channel: the request sent (its method), then the answer's status. */
export function noteRequest(method: string, status?: number): void {
  const r = current.getStore();
  if (!r) return;
  r.method = method;
  if (status !== undefined) r.status = status;
}
