/**
 * Where each mailbox's poll falls within a scheduled cycle. A process serving hundreds of
 * mailboxes would otherwise send the service all their list calls at once every interval: a burst
 * that runs into rate limits and leaves the link idle the rest of the time. The polls are spread
 * evenly over the first part of the interval instead; the scheduler counts the next interval from
 * the cycle's start (see CycleScheduler), so each mailbox is still polled once per interval.
 *
 * Spread one by one, every poll would wake the process on its own, and an idle daemon's CPU goes
 * to the wake-ups, not to the polls: with 500 mailboxes an isolated poll cost several times what
 * it cost beside others. So polls go out in small batches, at most one batch per SPREAD_STEP_MS:
 * spread just as evenly over any second, a fraction of the wake-ups.
 */

/** The share of the poll interval over which one cycle's polls are spread. */
export const SPREAD_SHARE = 0.5;

/** The shortest time between two batches of a cycle's polls. */
export const SPREAD_STEP_MS = 250;

/** Mailboxes whose cycle runs at the same moment, at most (each bounds its own transfers). */
export const MAILBOXES_AT_ONCE = 8;

/**
 * Delay from the cycle's start of each of `count` mailboxes' polls, in order: evenly spaced
 * batches, the first at 0, as many batches as the window holds steps (each mailbox its own batch
 * when there are fewer).
 */
export function pollOffsets(count: number, pollMs: number): number[] {
  const window = pollMs * SPREAD_SHARE;
  const batches = Math.min(count, Math.max(1, Math.floor(window / SPREAD_STEP_MS)));
  return Array.from({ length: count }, (_, i) => Math.floor((Math.floor((i * batches) / count) * window) / batches));
}
