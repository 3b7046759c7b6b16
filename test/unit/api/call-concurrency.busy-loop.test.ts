/**
 * The adaptive concurrency against this process's real event loop: calls that keep the loop busy
 * (our own CPU is the bottleneck, as on loopback) never raise the limit; calls that wait on
 * something else (a network's round trip) do. The queue follows the limit as the pipelines' does.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import PQueue from 'p-queue';
import { describe, expect, it } from 'vitest';
import { CallConcurrency } from '../../../src/api/call-concurrency.js';
import { LIMIT_RULES } from '../../../src/api/concurrency-limit.js';

/** `total` calls through a queue that follows the limit; the highest limit seen. */
async function highestLimit(call: () => Promise<void>, total = 400, cc = new CallConcurrency('adaptive', 64)): Promise<number> {
  const queue = new PQueue({ concurrency: cc.limit });
  cc.follow(queue);
  let highest = cc.limit;
  for (let i = 0; i < total; i++)
    void queue.add(async () => {
      await cc.measure(call);
      highest = Math.max(highest, cc.limit);
    });
  await queue.onIdle();
  return highest;
}

/**
 * A call that keeps the loop busy: 3 ms of our own CPU (parsing, hashing, journalling) after a turn
 * of the loop. The turn is a setImmediate, not a timer: a timer's wait counts as idle loop time, and
 * on a loaded machine (CI runs two suites side by side) timers fired late enough to bring the
 * loop's busy share under the limit's threshold, and the limit grew.
 */
async function busy(): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
  const end = performance.now() + 3;
  while (performance.now() < end);
}

describe('adaptive concurrency and the event loop', () => {
  it('holds the limit while the calls keep the loop busy, grows it while they wait', async () => {
    const waiting = async (): Promise<void> => {
      await sleep(3); // a round trip: the loop is free meanwhile
    };
    expect(await highestLimit(busy)).toBe(LIMIT_RULES.initial);
    expect(await highestLimit(waiting)).toBeGreaterThan(LIMIT_RULES.initial);
  });

  it('a pause between two cycles is not counted as room on the loop', async () => {
    // The window in progress when a cycle ends would otherwise span the pause: its loop mostly
    // idle, its latency unchanged, the limit grew at the next cycle's first answers.
    const cc = new CallConcurrency('adaptive', 64);
    expect(await highestLimit(busy, 200, cc)).toBe(LIMIT_RULES.initial);
    await sleep(400);
    expect(await highestLimit(busy, 200, cc)).toBe(LIMIT_RULES.initial);
  });
});
