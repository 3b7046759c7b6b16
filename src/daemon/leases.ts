/**
 * The daemon's side of the mailbox leases under a shared journal: the lease keeper wired to the
 * logs, the lease metrics and the scheduler (a lease taken starts a cycle at once, and its mailbox's
 * unfinished journal rows are finished first), and the view the cycles get of it.
 */
import type { Leases } from '../journal/index.js';
import { errorFields, TroubleLog } from '../errors/index.js';
import type { Logger } from '../log.js';
import { LeaseKeeper } from './lease-keeper.js';
import type { LeaseMetrics } from './lease-metrics.js';
import type { MailboxLeases } from './runtime.js';

export interface DaemonLeaseDeps {
  readonly leases: Leases;
  readonly ttlMs: number;
  readonly renewMs: number;
  /** mailboxId → the name its series and log lines carry. */
  readonly names: ReadonlyMap<number, string>;
  readonly logger: Logger;
  readonly metrics: LeaseMetrics;
  /** A lease was taken: run a cycle now. */
  readonly onTaken: () => void;
  /** Asked every round: a reason to hold no lease now (`LeaseKeeperOptions.check`). */
  readonly check?: () => Promise<Error | undefined>;
}

export function daemonLeases(d: DaemonLeaseDeps): { keeper: LeaseKeeper; view: MailboxLeases } {
  const log = d.logger.child({ component: 'leases', instance: d.leases.owner });
  const nameOf = (mailboxId: number): string => d.names.get(mailboxId) ?? `mb${mailboxId}`;
  // Mailboxes taken since their last cycle: what the journal holds unfinished for them goes first.
  const fresh = new Set<number>();
  // Every round fails while the journal's database is down: told when it starts and when it ends.
  const rounds = new TroubleLog({
    logger: log,
    level: 'warn',
    started: 'lease renewal round failed; retrying',
    ended: 'lease rounds get through again',
  });
  const keeper = new LeaseKeeper({
    leases: d.leases,
    mailboxIds: [...d.names.keys()],
    ttlMs: d.ttlMs,
    renewMs: d.renewMs,
    onAcquired: (lease, unheldMs) => {
      fresh.add(lease.mailboxId);
      d.metrics.acquired(nameOf(lease.mailboxId), unheldMs === undefined ? undefined : unheldMs / 1000);
      log.info({ mailboxId: lease.mailboxId, fencingToken: lease.token }, 'mailbox lease taken');
      d.onTaken();
    },
    onLost: (mailboxId, why) => {
      fresh.delete(mailboxId);
      const fields = { mailboxId, why, code: 'JOURNAL_LEASE_LOST' };
      if (why === 'refused') {
        d.metrics.released(nameOf(mailboxId));
        log.warn(fields, 'mailbox lease handed back: this instance may not hold it (see the error before)');
        return;
      }
      if (why === 'handed-back') {
        d.metrics.released(nameOf(mailboxId));
        log.info(fields, 'mailbox lease handed back (fair share)');
        return;
      }
      d.metrics.lost(nameOf(mailboxId));
      log.warn(fields, 'mailbox lease lost; its pipelines stop (requests in flight aborted)');
    },
    onError: (err, mailboxId) => rounds.failed(err, { mailboxId }),
    onReachable: () => rounds.ok(),
    ...(d.check ? { check: refusalLogged(d.check, log) } : {}),
  });
  // Every refused write, not only the first (which ends the holding): writes already under way
  // when the lease went are refused too, and each is one the fence stopped.
  d.leases.onWriteRefused((mailboxId) => d.metrics.staleWriteRefused(nameOf(mailboxId)));
  // One combined signal per holding, not one per cycle: on Node 20 each AbortSignal.any() stays
  // registered with its sources for as long as they live (~85 bytes a call, measured), and the
  // run's signal lives as long as the process — 100 mailboxes polled every 30 s left ~290,000 a day.
  const combined = new Map<number, { run: AbortSignal; lease: AbortSignal; signal: AbortSignal }>();
  const signalOf = (id: number, run: AbortSignal): AbortSignal => {
    const lease = keeper.handle(id).signal() ?? run;
    const known = combined.get(id);
    if (known?.run === run && known.lease === lease) return known.signal;
    const signal = AbortSignal.any([run, lease]);
    combined.set(id, { run, lease, signal });
    return signal;
  };
  const view: MailboxLeases = {
    holds: (id) => keeper.mayAct(id),
    takeFresh: (id) => fresh.delete(id),
    signal: signalOf,
    // Holding nothing while the journal does not answer is not the quiet cycle of a standby
    // instance: /readyz said ready and the cycles succeeded through a whole database outage.
    refusal: () => keeper.refusal() ?? (keeper.heldLeases().length === 0 ? keeper.unreachable() : undefined),
  };
  return { keeper, view };
}

/** The check, with its verdict logged when it changes: an error line once, not one per round. */
function refusalLogged(check: () => Promise<Error | undefined>, log: Logger): () => Promise<Error | undefined> {
  let before: Error | undefined;
  return async () => {
    const now = await check();
    if (now && now.message !== before?.message) log.error({ ...errorFields(now) }, 'holding no mailbox lease');
    else if (!now && before) log.info({}, 'mailbox leases may be taken again');
    before = now;
    return now;
  };
}

/** mailboxId → the name of the first configured mailbox with that id, in config order (`DaemonLeaseDeps.names`). */
export function firstNames(ids: readonly number[], mailboxes: readonly { name?: string | undefined }[]): Map<number, string> {
  const names = new Map<number, string>();
  for (const [i, id] of ids.entries()) if (!names.has(id)) names.set(id, mailboxes[i]?.name ?? `mb${id}`);
  return names;
}
