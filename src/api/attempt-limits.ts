/**
 * The time limits of one attempt, for every call of both protocols: an overall deadline
 * (`api.timeouts.callMs`) and a minimum transfer rate (`api.limits.minBytesPerSecond` over each
 * `rateWindowMs`). An answer that trickles in a few bytes at a time never trips the idle timeouts
 * of the connection; it trips these. Whichever limit fires aborts the attempt's signal and the
 * attempt fails with a GridTransportError naming that limit.
 */
import { setMaxListeners } from 'node:events';
import { GridTransportError } from './errors.js';

export interface AttemptLimits {
  /** The whole attempt, answer included, within this many ms. */
  readonly deadlineMs?: number;
  /** The deadline starts when the caller calls `armDeadline` (an upload: once its body is sent). */
  readonly deadlineArmed?: boolean;
  /** At least `bytesPerSecond` over every `windowMs`, as `progress` counts them (0 turns the check off). */
  readonly minRate?: { readonly bytesPerSecond: number; readonly windowMs: number; readonly progress: () => number };
  /** Told the count at the end of each `minRate` window in which it grew. */
  readonly moved?: (bytes: number) => void;
}

export interface AttemptControl {
  readonly signal: AbortSignal;
  /** Starts a `deadlineArmed` deadline now. */
  armDeadline(): void;
}

export async function withAttemptLimits<T>(
  endpoint: string,
  outer: AbortSignal | undefined,
  limits: AttemptLimits,
  fn: (control: AttemptControl) => Promise<T>,
): Promise<T> {
  // Already aborted (a stop reached its deadline while a cycle still had parcels queued): the
  // listener below would never fire, and the attempt went out to wait for an answer that a hung
  // service never gives — a SIGTERM then waited a rate window per parcel left, not shutdownTimeout.
  outer?.throwIfAborted();
  const ctl = new AbortController();
  let fired: { code: string; detail: string } | undefined;
  const fire = (code: string, detail: string): void => {
    fired ??= { code, detail };
    ctl.abort();
  };
  const onAbort = (): void => ctl.abort();
  if (outer) {
    // One signal (a cycle's, the daemon's) is shared by every call in flight — up to
    // api.connections of them, each removing its listener when it ends — which is no leak: without
    // this, node warned about one on stderr (a cron job's mail) at the 11th.
    setMaxListeners(0, outer);
    outer.addEventListener('abort', onAbort, { once: true });
  }
  let deadline: NodeJS.Timeout | undefined;
  const armDeadline = (): void => {
    if (limits.deadlineMs === undefined || deadline) return;
    const ms = limits.deadlineMs;
    deadline = setTimeout(() => fire('GRIDSYNC_CALL_DEADLINE', `no complete answer within ${ms} ms (api.timeouts.callMs)`), ms);
  };
  if (!limits.deadlineArmed) armDeadline();
  const rate = limits.minRate;
  let ticker: NodeJS.Timeout | undefined;
  if (rate && (rate.bytesPerSecond > 0 || limits.moved)) {
    let mark = rate.progress();
    ticker = setInterval(() => {
      const now = rate.progress();
      if (rate.bytesPerSecond > 0 && now - mark < (rate.bytesPerSecond * rate.windowMs) / 1000)
        fire('GRIDSYNC_TOO_SLOW', `less than ${rate.bytesPerSecond} bytes/s over ${rate.windowMs} ms (api.limits.minBytesPerSecond)`);
      else if (now > mark) limits.moved?.(now);
      mark = now;
    }, rate.windowMs);
  }
  try {
    return await fn({ signal: ctl.signal, armDeadline });
  } catch (err) {
    if (fired && !outer?.aborted) throw new GridTransportError(endpoint, fired.code, fired.detail, false, { cause: err });
    throw err;
  } finally {
    clearTimeout(deadline);
    clearInterval(ticker);
    outer?.removeEventListener('abort', onAbort);
  }
}
