/**
 * The time limits of one attempt, for every call of both protocols: an overall deadline
 * (`api.timeouts.callMs`) and a minimum transfer rate (`api.limits.minBytesPerSecond` over each
 * `rateWindowMs`). An answer that trickles in a few bytes at a time never trips the idle timeouts
 * of the connection; it trips these. Whichever limit fires aborts the attempt's signal and the
 * attempt fails with a GridTransportError naming that limit. An upload has both, one after the
 * other: the rate while its body goes out, the deadline for the answer once it is out.
 */
import { setMaxListeners } from 'node:events';
import { GridTransportError } from './errors.js';

export interface AttemptLimits {
  /** The whole attempt, answer included, within this many ms. */
  readonly deadlineMs?: number;
  /**
   * The deadline starts when the caller calls `armDeadline` (an upload: once its body is out),
   * which ends the `minRate` check: no more bytes are to be counted then.
   */
  readonly deadlineArmed?: boolean;
  /**
   * At least `bytesPerSecond` over every `windowMs`, as `progress` counts them from 0 in this
   * attempt (0 turns the check off), from the moment the HTTP channel says the transfer begins
   * (`transferBegins`).
   */
  readonly minRate?: { readonly bytesPerSecond: number; readonly windowMs: number; readonly progress: () => number };
  /** Told the count at the end of each `minRate` window in which it grew. */
  readonly moved?: (bytes: number) => void;
}

export interface AttemptControl {
  readonly signal: AbortSignal;
  /** Starts a `deadlineArmed` deadline now, and ends the minimum rate. */
  armDeadline(): void;
}

/** Attempts whose minimum rate waits for their transfer to begin, by their requests' signal (as attempt-record.ts finds records). */
const beginnings = new WeakMap<AbortSignal, () => void>();

/**
 * Told by the HTTP channel, for both protocols, when a transfer's bytes can begin to move: a
 * download's answer has arrived, an upload's body is first read. The attempt's minimum rate starts
 * then: the time before — waiting for a free connection of the pool while other transfers hold
 * them all, waiting for the service to answer — measures no line, and was cut as too slow. Those
 * waits are bounded by the connection's timeouts (connectMs, headersMs).
 */
export function transferBegins(signal: AbortSignal | undefined): void {
  const begin = signal && beginnings.get(signal);
  if (!begin) return;
  beginnings.delete(signal);
  begin();
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
  let ticker: NodeJS.Timeout | undefined;
  const startRate = (): void => {
    const rate = limits.minRate;
    if (!rate || ticker) return;
    // Counted from 0 in each attempt (the caller resets its count as the attempt starts): a mark
    // read here was the last attempt's count, and a retry after a transfer broken off late had to
    // move more than all of it in its first window or was cut as too slow.
    let mark = 0;
    ticker = setInterval(() => {
      const now = rate.progress();
      if (rate.bytesPerSecond > 0 && now - mark < (rate.bytesPerSecond * rate.windowMs) / 1000)
        fire('GRIDSYNC_TOO_SLOW', `less than ${rate.bytesPerSecond} bytes/s over ${rate.windowMs} ms (api.limits.minBytesPerSecond)`);
      else if (now > mark) limits.moved?.(now);
      mark = now;
    }, rate.windowMs);
  };
  const armDeadline = (): void => {
    if (limits.deadlineArmed) {
      beginnings.delete(ctl.signal);
      clearInterval(ticker);
    }
    if (limits.deadlineMs === undefined || deadline) return;
    const ms = limits.deadlineMs;
    deadline = setTimeout(() => fire('GRIDSYNC_CALL_DEADLINE', `no complete answer within ${ms} ms (api.timeouts.callMs)`), ms);
  };
  if (!limits.deadlineArmed) armDeadline();
  const rate = limits.minRate;
  if (rate && (rate.bytesPerSecond > 0 || limits.moved)) beginnings.set(ctl.signal, startRate);
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
