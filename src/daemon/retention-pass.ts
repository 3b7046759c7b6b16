/**
 * When the retention pass (./retention.ts) runs, for `run` and `once` alike: at most once a day
 * across processes, and only while our clock agrees with the service's. The time of the last
 * completed pass is a meta row of the journal (both backends), so a `once` from cron every few
 * minutes, or a `run` restarted often, does not prune at each start; on a shared journal one
 * instance's pass serves them all (they share the folders and the rows).
 */
import type { MailboxTransport } from '../api/index.js';
import { errorFields } from '../errors/index.js';
import { pruneAll } from './retention.js';
import type { PendingLister } from './retention-failed.js';
import type { DaemonRuntime } from './runtime.js';

/** A pass runs at most this often. */
export const RETENTION_EVERY_MS = 86_400_000;

/** `run` asks this often whether a pass is due: within an hour of it, without a timer of a day that a restart would reset. */
export const RETENTION_CHECK_MS = 3_600_000;

/**
 * Our clock may differ from the service's by this much and retention still runs. The offset is
 * read to a second plus the network's delay, and an NTP-kept host is far closer than this; a host
 * off by more has a wrong clock (a dead RTC battery before NTP), and ages measured on it would
 * delete archives and rows early. Ten minutes is nothing against retention periods of days.
 */
export const RETENTION_CLOCK_TOLERANCE_MS = 10 * 60_000;

/** The meta row holding the last completed pass, an ISO time. */
export const RETENTION_RECORD_KEY = 'lastRetention';

export type RetentionDecision =
  | { readonly run: true }
  | { readonly run: false; readonly why: 'recent'; readonly nextAt: number }
  | { readonly run: false; readonly why: 'clock unknown' }
  | { readonly run: false; readonly why: 'clock skewed'; readonly offsetMs: number };

/**
 * Whether a pass runs now. A recorded pass later than now (beyond the tolerance) does not hold it
 * back: it was recorded under a clock set otherwise, and waiting for it could take a year. Without
 * the service's clock (no dated answer yet) the pass waits for the next check rather than trust
 * ours: a cron `once` tries again minutes later, `run` within RETENTION_CHECK_MS.
 */
export function decideRetention(lastPassAt: number | undefined, now: number, serviceOffsetMs: number | undefined): RetentionDecision {
  if (lastPassAt !== undefined && lastPassAt <= now + RETENTION_CLOCK_TOLERANCE_MS && now - lastPassAt < RETENTION_EVERY_MS)
    return { run: false, why: 'recent', nextAt: lastPassAt + RETENTION_EVERY_MS };
  if (serviceOffsetMs === undefined) return { run: false, why: 'clock unknown' };
  if (Math.abs(serviceOffsetMs) > RETENTION_CLOCK_TOLERANCE_MS) return { run: false, why: 'clock skewed', offsetMs: serviceOffsetMs };
  return { run: true };
}

/** What a pass asks the service: a mailbox's pending list (failed parcels), and its clock. */
export type RetentionService = PendingLister & Pick<MailboxTransport, 'serviceClockOffsetMs'>;

/**
 * One check, and the pass when it is due. Never throws: a failure is one warning, and the caller's
 * work (the transfers of `once`, its exit code) is not touched. A stop before or during the pass
 * records nothing, so the next check runs it again.
 */
export async function retentionPass(rt: DaemonRuntime, service: RetentionService): Promise<void> {
  if (rt.signal.aborted) return;
  try {
    const last = Date.parse((await rt.journal.getMeta(RETENTION_RECORD_KEY)) ?? '');
    const now = rt.now();
    const decision = decideRetention(Number.isFinite(last) ? last : undefined, now, service.serviceClockOffsetMs?.());
    if (!decision.run) return explainSkip(rt, decision, now);
    await pruneAll(rt, service);
    if (rt.signal.aborted) return;
    const done = rt.now();
    await rt.journal.setMeta(RETENTION_RECORD_KEY, new Date(done).toISOString());
    rt.logger.info({ nextAt: new Date(done + RETENTION_EVERY_MS).toISOString() }, 'retention: pass complete');
  } catch (err) {
    rt.logger.warn({ ...errorFields(err) }, 'retention pass failed; it runs again at the next check');
  }
}

function explainSkip(rt: DaemonRuntime, d: Exclude<RetentionDecision, { run: true }>, now: number): void {
  if (d.why === 'recent') rt.logger.debug({ nextAt: new Date(d.nextAt).toISOString() }, 'retention: not due yet');
  else if (d.why === 'clock unknown') rt.logger.info({}, 'retention: skipped, no answer of the service has shown its clock yet');
  else
    rt.logger.warn(
      {
        localTime: new Date(now).toISOString(),
        serviceTime: new Date(now + d.offsetMs).toISOString(),
        offsetMs: d.offsetMs,
        toleranceMs: RETENTION_CLOCK_TOLERANCE_MS,
      },
      "retention skipped: this host's clock and the service's disagree; nothing deleted until they agree (check NTP)",
    );
}

/** `run`: a check at once and every RETENTION_CHECK_MS, never two passes at a time. */
export function scheduleRetention(rt: DaemonRuntime, service: RetentionService): { stop(): void } {
  let running: Promise<void> | undefined;
  const check = (): void => {
    running ??= retentionPass(rt, service).finally(() => (running = undefined));
  };
  check();
  const timer = setInterval(check, RETENTION_CHECK_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
