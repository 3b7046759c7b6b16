/**
 * One scheduled cycle of `run`: every mailbox's inbound cycle, the outbound work since the last
 * cycle (sent here in `windows` mode, between cycles in `continuous` mode), then the outcome —
 * the cycle record, the stuck watch, the last-success time, reachability.
 */
import { GridApiError } from '../api/index.js';
import type { TroubleLog } from '../errors/index.js';
import { JournalLeaseLostError } from '../journal/index.js';
import type { EventBus, PipelineEvents } from '../events/index.js';
import { emptyOutboundResult, OUTBOUND_EVENT_OF, type OutboundCycleResult } from '../outbound/index.js';
import { failsEveryMailbox, type FailingMailboxes } from './failing-mailboxes.js';
import type { DaemonMetrics } from './metrics.js';
import type { ProgressTracker } from './progress.js';
import type { HealthState } from './readiness.js';
import {
  cycleFailureTroubles,
  cycleRecordTrouble,
  describeStuck,
  mailboxFailureTrouble,
  observeCycle,
  recordInJournal,
} from './reporting.js';
import PQueue from 'p-queue';
import { addCounts, emptyTotals, type CycleTotals, type DaemonRuntime, type MailboxRuntime } from './runtime.js';
import { backoffDelay, WINDOW_FOLLOW_UP } from './scheduler.js';
import { MAILBOXES_AT_ONCE, pollOffsets } from './spread.js';
import type { DeliveryWatch } from './stuck.js';

/** The cycles the scheduler starts on its own: their polls are spread (a triggered cycle is wanted now). */
const SPREAD_REASONS = new Set(['start', 'poll']);

export interface CycleDeps {
  readonly rt: DaemonRuntime;
  readonly events: EventBus<PipelineEvents>;
  readonly metrics: DaemonMetrics;
  readonly health: HealthState;
  readonly watch: DeliveryWatch;
  readonly failing: FailingMailboxes;
  readonly progress: ProgressTracker;
  readonly stopping: () => boolean;
  /** Aborted when the daemon starts to stop: a spread cycle's waiting polls are dropped. */
  readonly stopSignal: AbortSignal;
  /** Consecutive failed cycles before this one. */
  readonly failures: () => number;
}

type OutboundCount = Exclude<keyof OutboundCycleResult, 'bytes'>;

export class RunCycle {
  /** Outbound work per mailbox since the previous cycle (in `continuous` mode it runs between cycles). */
  private readonly sinceCycle = new Map<string, OutboundCycleResult>();
  /** Why each mailbox's last inbound parcel was deferred (reported when deliveries stop). */
  private readonly deferReason = new Map<string, string>();
  private readonly recording: TroubleLog;
  private readonly cycleTrouble: ReturnType<typeof cycleFailureTroubles>;
  /** Per mailbox whose own part fails; dropped when another instance takes the mailbox over. */
  private readonly mailboxTrouble = new Map<string, TroubleLog>();

  constructor(private readonly d: CycleDeps) {
    this.recording = cycleRecordTrouble(d.rt.logger);
    this.cycleTrouble = cycleFailureTroubles(d.rt.logger);
    const since = (mailbox: string): OutboundCycleResult => {
      let r = this.sinceCycle.get(mailbox);
      if (!r) this.sinceCycle.set(mailbox, (r = emptyOutboundResult()));
      return r;
    };
    const count = (k: OutboundCount) => (e: { mailbox: string; count: number }) => (since(e.mailbox)[k] += e.count);
    for (const k of Object.keys(OUTBOUND_EVENT_OF) as OutboundCount[]) d.events.on(OUTBOUND_EVENT_OF[k], count(k));
    d.events.on('outbound:sent', (e) => (since(e.mailbox).bytes += e.bytes));
    d.events.on('inbound:deferred', (e) => {
      if (e.reason !== undefined) this.deferReason.set(e.mailbox, e.reason);
    });
  }

  /**
   * Runs one cycle, of every mailbox or of `only`; false when it failed, or left a mailbox out in a
   * cron window (the scheduler backs off and tries again). A scheduled cycle spreads its
   * mailboxes' polls over part of the interval (`pollOffsets`); a triggered one runs them at once.
   * Mailboxes run side by side, a few at a time. A mailbox whose own part fails is left out for a
   * while (`FailingMailboxes`) and the others go on; after a failure that every mailbox would meet
   * (the service unreachable, the journal gone) the ones not yet started are left for the next cycle.
   */
  async run(reason: string, only?: ReadonlySet<number>): Promise<boolean> {
    const { rt, metrics, health, watch, failing } = this.d;
    const totals = emptyTotals();
    const failuresBefore = this.d.failures();
    this.d.progress.newRound();
    const finished = new Set<string>();
    const mailboxes = only ? rt.mailboxes.filter((m) => only.has(m.mailboxId)) : rt.mailboxes;
    try {
      // Holding no mailbox for a reason (the journal serves another service, or does not answer):
      // not a quiet cycle of mailboxes other instances serve.
      const refused = rt.leases?.refusal();
      if (refused) throw refused;
      const start = rt.now();
      const offsets = SPREAD_REASONS.has(reason) ? pollOffsets(mailboxes.length, rt.config.schedule.poll) : [];
      const gate = new PQueue({ concurrency: MAILBOXES_AT_ONCE });
      let failure: { err: unknown } | undefined;
      const started: Promise<void>[] = [];
      // One waiter at a time, in offset order: the offsets only grow.
      for (const [i, m] of mailboxes.entries()) {
        // At most its offset: a wall clock stepped back during the cycle must not hold the rest back by the step.
        const wait = Math.min(offsets[i] ?? 0, (offsets[i] ?? 0) - (rt.now() - start));
        if (wait > 0) await rt.sleep(wait, this.d.stopSignal).catch(() => undefined);
        if (this.d.stopping() || failure) break;
        started.push(
          gate.add(async () => {
            if (this.d.stopping() || failure) return;
            // Under a shared journal, only the mailboxes whose lease this instance holds; one that
            // another instance serves now is not failing here.
            if (rt.leases && !rt.leases.holds(m.mailboxId)) {
              finished.add(m.name);
              this.mailboxTrouble.delete(m.name);
              return failing.forget(m.name);
            }
            if (!failing.due(m.name, rt.now())) return;
            try {
              if (!(await this.mailbox(m, reason, totals))) return;
              finished.add(m.name);
              const after = failing.succeeded(m.name);
              this.mailboxTrouble.get(m.name)?.ok({ mailbox: m.name, after });
            } catch (err) {
              // Stopping, or a lease lost mid-cycle, is no failure: the new holder goes on with this mailbox.
              if (this.d.stopping() || err instanceof JournalLeaseLostError || rt.leases?.holds(m.mailboxId) === false) return;
              if (failsEveryMailbox(err)) failure ??= { err };
              else this.failed(m, err);
            }
          }),
        );
      }
      await Promise.all(started);
      if (this.d.stopping()) return true;
      if (failure) throw failure.err;
      recordInJournal(rt, 'lastCycle', totals, this.recording);
      const failed = failing.any ? failing.list(rt.now())[0] : undefined;
      // With cron windows no cycle follows until the next window: a mailbox left out is retried
      // within this one, on the scheduler's backoff as after a failed cycle, not a night later.
      const retryInWindow = failed !== undefined && Boolean(rt.config.schedule.cron?.length);
      if (!retryInWindow) {
        this.cycleTrouble.outage.ok({ after: failuresBefore });
        this.cycleTrouble.refused.ok({ after: failuresBefore });
      }
      const stuck = watch.stuck();
      // A cycle that delivered nothing because of a local condition, or left a mailbox out, is not
      // a success: the "no successful cycle" alert must fire for it as for an outage.
      if (stuck.length === 0 && !failed) health.succeeded(rt.now());
      health.lastError = failed ? `${failed.mailbox}: ${failed.error}` : stuck[0] ? describeStuck(stuck[0]) : undefined;
      metrics.up.set(1);
      if (totals.inbound.listed || totals.inbound.confirmed || totals.outbound.archived) {
        rt.logger.info({ reason, inbound: totals.inbound, outbound: totals.outbound }, 'cycle done');
      }
      return !retryInWindow;
    } catch (err) {
      if (this.d.stopping()) return true;
      health.lastError = (err as Error).message;
      metrics.up.set(0);
      for (const m of mailboxes) if (!finished.has(m.name)) metrics.lastCycleOk.set({ mailbox: m.name }, 0);
      const expired = err instanceof GridApiError && err.httpStatus === 401;
      const retryInMs = backoffDelay(failuresBefore + 1, rt.config.schedule.poll);
      (expired ? this.cycleTrouble.refused : this.cycleTrouble.outage).failed(err, { failures: failuresBefore + 1, retryInMs });
      return false;
    }
  }

  /** A mailbox's own part failed: it sits out a pause, the others go on. */
  private failed(m: MailboxRuntime, err: unknown): void {
    const { rt, metrics, failing } = this.d;
    const f = failing.failed(m.name, (err as Error).message, rt.now());
    metrics.lastCycleOk.set({ mailbox: m.name }, 0);
    let trouble = this.mailboxTrouble.get(m.name);
    if (!trouble) this.mailboxTrouble.set(m.name, (trouble = mailboxFailureTrouble(rt.logger)));
    trouble.failed(err, { mailbox: m.name, failures: f.failures, retryInMs: f.retryInMs });
  }

  /** One mailbox's part of a cycle: its inbound cycle, its outbound work, its outcome. False when its lease went meanwhile. */
  private async mailbox(m: MailboxRuntime, reason: string, totals: CycleTotals): Promise<boolean> {
    const { rt, metrics, watch } = this.d;
    const signal = rt.leases ? rt.leases.signal(m.mailboxId, rt.signal) : rt.signal;
    if (rt.leases?.takeFresh(m.mailboxId) && !(await recoverTaken(m, signal))) return false;
    if (m.inbound) {
      const end = metrics.cycleDuration.startTimer({ mailbox: m.name });
      const r = await m.inbound.runCycle({ signal });
      end();
      addCounts(totals.inbound, r);
      const why = this.deferReason.get(m.name);
      observeCycle(watch, metrics, rt.logger, m.name, 'in', {
        deferred: r.deferred,
        progressed: r.confirmed + r.failed,
        ...(why !== undefined ? { reason: why } : {}),
      });
    }
    if (m.outbound) {
      // In `windows` mode the cycle sends; in `continuous` mode the outbox was sent between
      // cycles. Either way the events since the last cycle say what was done.
      if (rt.config.schedule.outbound === 'windows' && reason !== WINDOW_FOLLOW_UP) await m.outbound.runCycle({ signal });
      const r = this.sinceCycle.get(m.name) ?? emptyOutboundResult();
      this.sinceCycle.delete(m.name);
      addCounts(totals.outbound, r);
      observeCycle(watch, metrics, rt.logger, m.name, 'out', { deferred: r.deferred, progressed: r.archived + r.rejected + r.failed });
    }
    // Stopped deliveries are no success: the alerts must fire for them as for an outage.
    const ok = !watch.isStuck(m.name);
    metrics.lastCycleOk.set({ mailbox: m.name }, ok ? 1 : 0);
    if (ok) metrics.lastSuccess.set({ mailbox: m.name }, rt.now() / 1000);
    return true;
  }
}

/**
 * A lease just taken: what the journal holds unfinished for the mailbox (left by the previous
 * holder, or by this instance before a lost lease) is finished first. False when the lease went
 * again meanwhile.
 */
async function recoverTaken(m: MailboxRuntime, signal: AbortSignal): Promise<boolean> {
  try {
    await m.inbound?.recover({ signal });
    await m.outbound?.recover();
    return true;
  } catch (err) {
    if (err instanceof JournalLeaseLostError) return false;
    throw err;
  }
}
