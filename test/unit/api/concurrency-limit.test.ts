/**
 * The adaptive concurrency limit as a pure function: answers in, a limit out, on an injected clock.
 * Each test drives it the way a queue would — every slot busy (or not), answers one after another.
 */
import { describe, expect, it } from 'vitest';
import { initialLimitState, LIMIT_RULES, nextLimit, type CallSample, type LimitState } from '../../../src/api/concurrency-limit.js';

const MAX = 64;

/** A queue's run: `answers` calls, each `latencyMs` long, every slot busy unless `inFlight` says otherwise. */
function run(
  start: LimitState,
  clock: { now: number },
  answers: number,
  latencyMs: number,
  opts: { inFlight?: (limit: number) => number; outcome?: CallSample['outcome']; max?: number; loopBusy?: number } = {},
): LimitState {
  let s = start;
  for (let i = 0; i < answers; i++) {
    clock.now += latencyMs / Math.max(1, s.limit);
    const sample: CallSample = {
      startedAt: clock.now - latencyMs,
      latencyMs,
      outcome: opts.outcome ?? 'ok',
      inFlight: opts.inFlight?.(s.limit) ?? s.limit,
      ...(opts.loopBusy !== undefined ? { loopBusy: opts.loopBusy } : {}),
    };
    s = nextLimit(s, sample, clock.now, opts.max ?? MAX);
  }
  return s;
}

/** As `run`, but each answer's latency follows the limit in force (something queues, or not). */
function runUnder(
  start: LimitState,
  clock: { now: number },
  answers: number,
  latencyAt: (limit: number) => number,
  loopBusy?: number,
): LimitState {
  let s = start;
  for (let i = 0; i < answers; i++) s = run(s, clock, 1, latencyAt(s.limit), loopBusy !== undefined ? { loopBusy } : {});
  return s;
}

/** Limits seen while running: one entry per answer. */
function limitsDuring(start: LimitState, clock: { now: number }, answers: number, latencyMs: number): number[] {
  const seen: number[] = [];
  let s = start;
  for (let i = 0; i < answers; i++) {
    s = run(s, clock, 1, latencyMs);
    seen.push(s.limit);
  }
  return seen;
}

const overload = (s: LimitState, clock: { now: number }, startedAt = clock.now): LimitState =>
  nextLimit(s, { startedAt, latencyMs: 80, outcome: 'overload', inFlight: s.limit }, clock.now, MAX);

describe('adaptive concurrency limit', () => {
  it('starts at the old fixed default and grows to the maximum while latency stays flat and the slots are used', () => {
    const clock = { now: 0 };
    const s0 = initialLimitState(MAX, 0);
    expect(s0.limit).toBe(LIMIT_RULES.initial);
    const seen = limitsDuring(s0, clock, 400, 80);
    expect(Math.max(...seen)).toBe(MAX);
    expect(seen.at(-1)).toBe(MAX);
    // Never shrinks on a flat latency, and never past the maximum.
    seen.forEach((l, i) => expect(l).toBeGreaterThanOrEqual(seen[i - 1] ?? 0));
  });

  it('slow start keeps its pace: at 20 ms per call the limit reaches the maximum within six round trips', () => {
    // A window of at least minWindowMs while ramping cost a WAN burst 100 ms per doubling.
    const clock = { now: 0 };
    let s = initialLimitState(MAX, 0);
    while (s.limit < MAX && clock.now < 10_000) s = run(s, clock, 1, 20);
    expect(s.limit).toBe(MAX);
    expect(clock.now).toBeLessThanOrEqual(6 * 20);
  });

  it('does not grow while our own event loop is saturated, even on a flat latency or a throughput that seems bought', () => {
    const clock = { now: 0 };
    expect(run(initialLimitState(MAX, 0), clock, 400, 80, { loopBusy: 0.97 }).limit).toBe(LIMIT_RULES.initial);
    // A cold process on loopback: every call gets cheaper as the JIT warms up, whatever the limit.
    let answered = 0;
    const warmingUp = (busy: number): LimitState =>
      runUnder(initialLimitState(MAX, 0), { now: 0 }, 2000, () => 5 / (1 + answered++ / 100), busy);
    expect(warmingUp(0.97).limit).toBe(LIMIT_RULES.initial);
    answered = 0;
    expect(warmingUp(0.5).limit).toBeGreaterThan(LIMIT_RULES.initial);
    // The service's "too much" still cuts.
    const high = run(initialLimitState(MAX, 0), clock, 400, 80);
    expect(overload(high, clock).limit).toBe(MAX / 2);
    expect(run(overload(high, clock), clock, 400, 80, { loopBusy: 0.97 }).limit).toBe(MAX / 2);
  });

  it('does not back off on latency either while our own event loop is saturated: the calls wait for our CPU', () => {
    const clock = { now: 0 };
    const high = run(initialLimitState(MAX, 0), clock, 400, 80);
    clock.now += 1000;
    expect(run(high, clock, 1000, 80 * 3, { loopBusy: 0.97 }).limit).toBe(MAX);
    // With room on the loop, a latency that stays high is a queue elsewhere.
    expect(run(high, clock, 1000, 80 * 3, { loopBusy: 0.5 }).limit).toBeLessThan(MAX);
  });

  it('does not grow a limit the queue does not use', () => {
    const clock = { now: 0 };
    const s = run(initialLimitState(MAX, 0), clock, 500, 80, { inFlight: () => 1 });
    expect(s.limit).toBe(LIMIT_RULES.initial);
  });

  it('halves on a 429/503, once per round: answers to calls started before the cut do not cut again', () => {
    const clock = { now: 0 };
    const high = run(initialLimitState(MAX, 0), clock, 400, 80);
    expect(high.limit).toBe(MAX);
    const startedBefore = clock.now - 10;
    clock.now += 1;
    const halved = overload(high, clock, startedBefore);
    expect(halved.limit).toBe(MAX / 2);
    // The other calls of the same round answer 429 too: they started before the cut.
    let s = halved;
    for (let i = 0; i < 20; i++) s = overload(s, clock, startedBefore);
    expect(s.limit).toBe(MAX / 2);
    // A call started after the cut that still meets a 429: halve again.
    clock.now += 100;
    expect(overload(s, clock).limit).toBe(MAX / 4);
  });

  it('timeouts back off like a 429', () => {
    const clock = { now: 0 };
    const high = run(initialLimitState(MAX, 0), clock, 400, 80);
    clock.now += 1;
    const s = nextLimit(high, { startedAt: clock.now, latencyMs: 120_000, outcome: 'timeout', inFlight: MAX }, clock.now, MAX);
    expect(s.limit).toBe(MAX / 2);
  });

  it('never goes below 1, however many 429s', () => {
    const clock = { now: 0 };
    let s = initialLimitState(MAX, 0);
    for (let i = 0; i < 50; i++) {
      clock.now += 100;
      s = overload(s, clock);
      expect(s.limit).toBeGreaterThanOrEqual(1);
    }
    expect(s.limit).toBe(1);
  });

  it('never exceeds a small configured maximum', () => {
    const clock = { now: 0 };
    const s = run(initialLimitState(3, 0), clock, 300, 80, { max: 3 });
    expect(s.limit).toBe(3);
    expect(initialLimitState(1, 0).limit).toBe(1);
  });

  it('recovers after a back-off: grows again to the maximum once answers come back fine', () => {
    const clock = { now: 0 };
    let s = run(initialLimitState(MAX, 0), clock, 400, 80);
    for (let i = 0; i < 4; i++) {
      clock.now += 1000;
      s = overload(s, clock);
    }
    expect(s.limit).toBe(MAX / 16);
    clock.now += 1000;
    s = run(s, clock, 2000, 80);
    expect(s.limit).toBe(MAX);
  });

  it('backs off when latency stays well above the no-load latency for two windows (calls queue somewhere), holds for one or when it rises a little', () => {
    const clock = { now: 0 };
    const high = run(initialLimitState(MAX, 0), clock, 400, 80);
    clock.now += 1000;
    const held = run(high, clock, 64, 80 * 1.6);
    expect(held.limit).toBe(MAX);
    clock.now += 1000;
    // One window: a pause of the host as likely as a queue.
    const once = run(high, clock, 64, 80 * 3);
    expect(once.limit).toBe(MAX);
    const queued = run(once, clock, 64, 80 * 3);
    expect(queued.limit).toBeLessThan(MAX);
    expect(queued.limit).toBeGreaterThanOrEqual(MAX / 2);
  });

  it('grows into a latency rise that buys throughput (a busy client, not a queue at the service)', () => {
    const clock = { now: 0 };
    // Each call costs more the more are in flight, but more calls still get more done.
    const s = runUnder(initialLimitState(MAX, 0), clock, 2000, (limit) => 80 * (1 + limit / 16));
    expect(s.limit).toBe(MAX);
  });

  it('backs off a raise that brings latency and no throughput (the service serves 8 at a time and queues the rest)', () => {
    const clock = { now: 0 };
    const s = runUnder(initialLimitState(MAX, 0), clock, 300, (limit) => 80 * Math.max(1, limit / 8));
    expect(s.limit).toBeLessThan(16);
  });

  it('a path that became slower for good: the limit backs off, then grows again once the no-load latency is measured afresh', () => {
    const clock = { now: 0 };
    let s = run(initialLimitState(MAX, 0), clock, 400, 20);
    expect(s.limit).toBe(MAX);
    // From now on every call costs 80 ms: read as queueing first, the limit backs off…
    s = run(s, clock, 400, 80);
    expect(s.limit).toBeLessThan(MAX);
    // … until the no-load latency is measured afresh and the limit grows again.
    clock.now += LIMIT_RULES.floorPeriodMs;
    s = run(s, clock, 3000, 80);
    expect(s.limit).toBe(MAX);
  });

  it('a latency that wobbles around its level (a busy host) does not walk the limit down', () => {
    const clock = { now: 0 };
    let s = run(initialLimitState(MAX, 0), clock, 400, 80);
    const wobble = [80, 140, 100, 200, 90, 160, 120, 250];
    const seen: number[] = [];
    for (let i = 0; i < 4000; i++) {
      s = run(s, clock, 1, wobble[(i * 7) % wobble.length] as number);
      seen.push(s.limit);
    }
    expect(seen.slice(-500).every((l) => l >= MAX / 2)).toBe(true);
  });

  it('a fast path whose latency grows with the calls in flight and scatters widely is not walked down to 1', () => {
    // Loopback: our CPU and the service's share the machine, so each call more in flight adds
    // latency and still some throughput (4L / (L + 4) answers per ms), and single answers scatter
    // as service times do (exponentially). A window of a few milliseconds then reads noise as
    // queueing, and the limit, cut on it, never met a flat enough latency to grow back.
    let seed = 1;
    const random = (): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed / 2 ** 31);
    const clock = { now: 0 };
    let s = initialLimitState(MAX, 0);
    const seen: number[] = [];
    for (let i = 0; i < 40_000; i++) {
      s = run(s, clock, 1, ((s.limit + 4) / 4) * -Math.log(1 - 0.999 * random()));
      seen.push(s.limit);
    }
    expect(Math.min(...seen.slice(-20_000))).toBeGreaterThanOrEqual(2 * LIMIT_RULES.initial);
  });
});
