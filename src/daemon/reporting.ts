/**
 * What the daemon tells about its cycles: the record in the journal (`status` reads it), the
 * stuck-deliveries watch turned into metrics and error-level log lines.
 */
import { errorFields, TroubleLog } from '../errors/index.js';
import type { Logger } from '../log.js';
import type { DaemonMetrics } from './metrics.js';
import type { DaemonRuntime } from './runtime.js';
import type { CycleObservation, DeliveryWatch, Direction, StuckDirection } from './stuck.js';

/**
 * Stores one record under `key` in the journal's meta table; a failure is a warning, never the
 * cycle's. `trouble`: where the failures of a record written every cycle are told (once while the
 * journal's database is down, not once per cycle).
 */
export function recordInJournal(rt: DaemonRuntime, key: 'lastCycle' | 'lastOnce', record: object, trouble?: TroubleLog): void {
  rt.journal.setMeta(key, JSON.stringify({ at: new Date(rt.now()).toISOString(), ...record })).then(
    () => trouble?.ok(),
    (err: unknown) => {
      if (trouble) trouble.failed(err);
      else
        rt.logger.warn(
          { ...errorFields(err) },
          key === 'lastOnce' ? 'cannot record the run in the journal' : 'cannot record the cycle in the journal',
        );
    },
  );
}

/** Where `run` tells that its cycles cannot be recorded (recordInJournal). */
export function cycleRecordTrouble(logger: Logger): TroubleLog {
  return new TroubleLog({
    logger,
    level: 'warn',
    started: 'cannot record the cycle in the journal',
    ended: 'cycles are recorded in the journal again',
  });
}

/**
 * Where `run` tells that whole cycles fail: through a night's outage the backoff still brings one
 * failed cycle every 5 minutes, each an error line that pages whoever watches them. The outage may
 * be the service's or the journal's (its PostgreSQL server down or out of slots): its end line
 * names neither, its `code` says which. A revoked key
 * (401) is a trouble of its own: it shares its code with the service's own errors, and it is the
 * operator's to fix, not the service's.
 */
export function cycleFailureTroubles(logger: Logger): { readonly outage: TroubleLog; readonly refused: TroubleLog } {
  return {
    outage: new TroubleLog({
      logger,
      level: 'error',
      started: 'cycle failed; retrying with backoff',
      ended: 'cycles get through again; back to the normal schedule',
    }),
    refused: new TroubleLog({
      logger,
      level: 'error',
      started: 'credentials rejected (expired or revoked?); retrying with backoff',
      ended: 'credentials accepted again; back to the normal schedule',
    }),
  };
}

/** Where `run` tells that one mailbox's own part of the cycles fails (its access revoked for a night). */
export function mailboxFailureTrouble(logger: Logger): TroubleLog {
  return new TroubleLog({
    logger,
    level: 'error',
    started: 'mailbox cycle failed; the other mailboxes go on, this one is retried with backoff',
    ended: 'the mailbox answers again',
  });
}

/** Feeds one cycle of one direction to the stuck watch; logs and counts the transitions. */
export function observeCycle(
  watch: DeliveryWatch,
  metrics: DaemonMetrics,
  logger: Logger,
  mailbox: string,
  direction: Direction,
  o: CycleObservation,
): void {
  const t = watch.observe(mailbox, direction, o);
  metrics.stuckCycles.set({ direction, mailbox }, watch.cycles(mailbox, direction));
  metrics.stuck.set({ direction, mailbox }, watch.isStuck(mailbox, direction) ? 1 : 0);
  if (t?.kind === 'stuck') {
    logger.error(
      { mailbox, direction, cycles: t.state.cycles, waiting: t.state.waiting, reason: t.state.reason },
      `deliveries stopped: ${describeStuck(t.state)}`,
    );
  } else if (t?.kind === 'recovered') {
    logger.info({ mailbox, direction, afterCycles: t.state.cycles }, 'deliveries moving again');
  }
}

export function describeStuck(s: StuckDirection): string {
  return `${s.mailbox} ${s.direction === 'in' ? 'inbound' : 'outbound'}: ${s.waiting} item(s) waiting, nothing delivered for ${s.cycles} cycles: ${s.reason}`;
}
