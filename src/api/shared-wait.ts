/**
 * A caller's wait for work it shares with other callers (the one login every call of a client
 * waits for): the caller stops waiting when its own signal aborts, also when it was aborted
 * before the wait began (its 'abort' event never comes again), while the work goes on for the
 * others. Without it a stop waited for a login the service held, up to its deadline per attempt.
 */
import { setMaxListeners } from 'node:events';

export async function waitShared<T>(shared: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return shared;
  signal.throwIfAborted();
  // Every call of a cycle may wait on one login under the cycle's signal (as in attempt-limits.ts).
  setMaxListeners(0, signal);
  let onAbort!: () => void;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([shared, aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}
