/**
 * Where each mailbox's poll falls within a scheduled cycle. A process serving hundreds of
 * mailboxes would otherwise send the service all their list calls at once every interval: a burst
 * that runs into rate limits and leaves the link idle the rest of the time. The polls are spread
 * evenly over the first part of the interval instead; the scheduler counts the next interval from
 * the cycle's start (see CycleScheduler), so each mailbox is still polled once per interval.
 */

/** The share of the poll interval over which one cycle's polls are spread. */
export const SPREAD_SHARE = 0.5;

/** Mailboxes whose cycle runs at the same moment, at most (each bounds its own transfers). */
export const MAILBOXES_AT_ONCE = 8;

/** Delay from the cycle's start of each of `count` mailboxes' polls, in order: evenly spaced, the first at 0. */
export function pollOffsets(count: number, pollMs: number): number[] {
  const window = pollMs * SPREAD_SHARE;
  return Array.from({ length: count }, (_, i) => Math.floor((i * window) / count));
}
