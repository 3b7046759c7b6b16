/**
 * How many calls one queue keeps on the wire, decided from what its calls did: a small pure
 * function in the manner of TCP Vegas and the gradient limiters of Netflix's concurrency-limits,
 * with TCP's slow start and multiplicative decrease.
 *
 * Across a WAN a call costs the round trip whatever else is in flight, so throughput grows with
 * the calls in flight until something queues: the service, the network, the connection pool or
 * our own CPU. Queueing shows as latency rising, long before errors do. Per window of about one
 * limit's worth of answers (and at least `minWindowMs` once slow start is over), the window's
 * median latency is compared with two levels: the latency without load (`floor`, the lowest
 * window median, measured afresh every `floorPeriodMs` so that a slower path for good is not read
 * as queueing for ever) and the usual latency (`usual`, smoothed over the earlier windows: what a
 * sudden rise is measured against). Then:
 * - near the floor (within `flat`) and the limit actually used: grow — doubling while in slow
 *   start, by √limit after the first back-off;
 * - the last raise of the limit bought throughput (`minGain` or more): grow too, whatever the
 *   latency — a busy client's own CPU stretches every call, yet more calls
 *   still get more done; throughput is the goal, and its latency the usual level from then on;
 * - `queueing` × the usual latency or more, and no such gain: back off by `latencyCut` — at once
 *   when the window ran at a limit just raised (the raise is what queues), otherwise only on the
 *   second such window in a row (one window is as likely a pause of the host as a queue);
 * - otherwise hold (a latency above the floor that does not rise is not a reason to move).
 * Neither grow nor back off on latency while this process's event loop was busy through the window
 * (`busyLoop`): our own CPU is then what every call queues behind, so the latency says nothing about
 * the service, and more calls in flight only wait longer for it. On loopback, where a call costs
 * microseconds, a cold `once` read the JIT warming up as throughput bought by each raise and
 * climbed to the maximum: 64 downloads in flight instead of 4–8, and ~0.7 ms more CPU per parcel;
 * and read each stretch of its own CPU as a queue to back off from (docs/performance.md). Across a
 * WAN the loop is mostly idle.
 * A 429 or 503 answer, or a timeout, is the service saying "too much": halve at once (`dropCut`),
 * once per round — answers to calls started before a cut say nothing about the new limit and are
 * not counted. The limit stays within 1 … max.
 *
 * The state lives as long as the pipeline, across cycles. On loopback, answers come a few ms apart
 * and scatter widely: windows of 8 of them read that scatter as queueing, and the limit, cut on it,
 * never met a latency flat enough to grow back (every cycle after a month-end backlog's first ran
 * at a third to a half of a fixed 8's rate). Hence `minWindowMs`, the second window in a row, and
 * `resumedAfterIdle`.
 *
 * A service that queues without ever refusing lets the limit creep by one step per floor period at
 * most (the floor is measured afresh, and a raise then looks flat); `maxConcurrency` bounds it.
 */

/** What one finished call tells the limit. */
export interface CallSample {
  /** When the call started, on the limit's clock. */
  readonly startedAt: number;
  readonly latencyMs: number;
  /** `overload`: a 429/503 answer was seen during the call; `timeout`: it timed out. */
  readonly outcome: 'ok' | 'overload' | 'timeout';
  /** Calls in flight when it ended, itself included: a limit that is not used is not raised. */
  readonly inFlight: number;
  /** Share (0–1) of the time since the window began that the process's event loop was busy. */
  readonly loopBusy?: number;
}

export interface LimitState {
  readonly limit: number;
  readonly slowStart: boolean;
  /** The usual latency (ms), once a window has been seen: what a sudden rise is measured against. */
  readonly usualMs: number | undefined;
  /** The latency without load (ms): the lowest window median since `floorSince`. */
  readonly floorMs: number | undefined;
  readonly floorSince: number;
  /** Latencies of the window being filled, when it began, and the most calls in flight seen during it. */
  readonly window: readonly number[];
  readonly windowStart: number;
  readonly windowPeak: number;
  /** The previous window's throughput (answers per ms) and the limit it ran at. */
  readonly lastRate: number | undefined;
  readonly lastLimit: number;
  /** When the limit was last cut (calls started before it are not counted). */
  readonly lastCutAt: number;
  /** The previous window showed queueing at a limit it had not been raised to. */
  readonly queued: boolean;
}

export const LIMIT_RULES = {
  /** The limit a queue starts from: the fixed default before the limit adapted. */
  initial: 4,
  /** Answers per window: one limit's worth, within these bounds (fewer are noise, more are slow). */
  minWindow: 8,
  maxWindow: 64,
  /**
   * After slow start, a window lasts at least this long: enough answers that a pause of the host
   * does not make its median. Slow start keeps windows of answers alone: a burst across a WAN
   * ramps in a few round trips, and its first back-off ends it.
   */
  minWindowMs: 100,
  /** Nothing in flight this long: the window in progress starts afresh with the next call. */
  idleMs: 100,
  /** Window median / no-load latency at or below which latency counts as flat. */
  flat: 1.3,
  /** … at or above which calls are queueing somewhere: back off. */
  queueing: 2,
  latencyCut: 0.75,
  dropCut: 0.5,
  /** A rise in throughput after a raise of the limit that shows the raise paid (noise is smaller). */
  minGain: 0.1,
  /** How far the usual latency moves towards a window's median: towards a lower one, a higher one. */
  followFall: 0.5,
  followRise: 0.1,
  /** The no-load latency is measured afresh after this long (a slower path for good is not queueing). */
  floorPeriodMs: 60_000,
  /** An event loop busy this share of a window or more: the limit does not grow. */
  busyLoop: 0.9,
} as const;

export function initialLimitState(max: number, now: number): LimitState {
  return {
    limit: clamp(LIMIT_RULES.initial, max),
    slowStart: true,
    usualMs: undefined,
    floorMs: undefined,
    floorSince: now,
    window: [],
    windowStart: now,
    windowPeak: 0,
    lastRate: undefined,
    lastLimit: Infinity,
    lastCutAt: -Infinity,
    queued: false,
  };
}

/**
 * The state when a call starts on a queue that has had nothing in flight for `idleMs` or more
 * (between two cycles, mostly): the window in progress starts afresh from `now`. Spanning the
 * pause, it counted the pause's time in its throughput and the pause's idle loop as room to grow:
 * on loopback, its loop saturated, a daemon could raise its limit at a cycle's first answers.
 */
export function resumedAfterIdle(state: LimitState, now: number): LimitState {
  return { ...state, window: [], windowStart: now, windowPeak: 0 };
}

/** The state after one more finished call, at `now` (the same clock as `startedAt`). */
export function nextLimit(state: LimitState, sample: CallSample, now: number, max: number): LimitState {
  if (sample.startedAt < state.lastCutAt) return state;
  if (sample.outcome !== 'ok') return cut(state, LIMIT_RULES.dropCut, now, max);
  const window = [...state.window, sample.latencyMs];
  const windowPeak = Math.max(state.windowPeak, sample.inFlight);
  const short = window.length < windowSize(state.limit) || (!state.slowStart && now - state.windowStart < LIMIT_RULES.minWindowMs);
  if (short) return { ...state, window, windowPeak };
  const median = medianOf(window);
  const usual = state.usualMs ?? median;
  const follow = median < usual ? LIMIT_RULES.followFall : LIMIT_RULES.followRise;
  const fresh = state.floorMs === undefined || now - state.floorSince >= LIMIT_RULES.floorPeriodMs;
  const floor = fresh ? median : Math.min(state.floorMs as number, median);
  const rate = window.length / Math.max(1, now - state.windowStart);
  const next: LimitState = {
    ...state,
    usualMs: usual + follow * (median - usual),
    floorMs: floor,
    floorSince: fresh ? now : state.floorSince,
    window: [],
    windowStart: now,
    windowPeak: 0,
    lastRate: rate,
    lastLimit: state.limit,
    queued: false,
  };
  const saturated = (sample.loopBusy ?? 0) >= LIMIT_RULES.busyLoop;
  if (saturated) return next;
  const paid = throughputGrew(state, rate);
  if (median >= LIMIT_RULES.queueing * usual && !paid) {
    if (state.lastLimit < state.limit || state.queued) return cut(next, LIMIT_RULES.latencyCut, now, max);
    return { ...next, queued: true };
  }
  const used = windowPeak * 2 >= state.limit;
  if (!used || (median > LIMIT_RULES.flat * floor && !paid)) return next;
  const grown = state.slowStart ? state.limit * 2 : state.limit + Math.max(1, Math.floor(Math.sqrt(state.limit)));
  // A latency that rose with the throughput is the price of it: the usual level from now on.
  return { ...next, limit: clamp(grown, max), usualMs: paid ? Math.max(median, next.usualMs as number) : next.usualMs };
}

/** True when the last raise of the limit bought throughput: the latency rose because more got done. */
function throughputGrew(state: LimitState, rate: number): boolean {
  if (state.lastRate === undefined || state.lastLimit >= state.limit) return false;
  return rate >= state.lastRate * (1 + LIMIT_RULES.minGain);
}

function cut(state: LimitState, factor: number, now: number, max: number): LimitState {
  const limit = clamp(Math.floor(state.limit * factor), max);
  return { ...state, limit, slowStart: false, lastCutAt: now, window: [], windowStart: now, windowPeak: 0, queued: false };
}

const clamp = (limit: number, max: number): number => Math.max(1, Math.min(Math.max(1, max), limit));

const windowSize = (limit: number): number => Math.min(LIMIT_RULES.maxWindow, Math.max(LIMIT_RULES.minWindow, limit));

function medianOf(xs: readonly number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}
