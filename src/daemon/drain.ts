/**
 * `gridsync once`: recovery, then cycles of every mailbox until nothing deliverable is left, or
 * only final failures are, or `once.drainTimeout` runs out while transient ones remain. The result
 * names every item left undelivered and why: a scheduler running `once` must see each of them.
 */
import { GridTransportError } from '../api/index.js';
import { INBOUND_UNFINISHED, InboundJournal, OUTBOUND_UNFINISHED, OutboundJournal } from '../journal/index.js';
import { describeConnectFailure } from './connect.js';
import type { ProgressTracker } from './progress.js';
import { orphanedWork } from './orphans.js';
import { recordInJournal } from './reporting.js';
import { addCounts, emptyTotals, type CycleTotals, type DaemonRuntime, type MailboxRuntime } from './runtime.js';
import { backoffDelay } from './scheduler.js';

/** One item `once` leaves undelivered, and why. */
export interface LeftItem {
  readonly mailbox: string;
  readonly direction: 'in' | 'out';
  /** `parcel 123 (name)`, a file name, or `(cycle)` when the whole cycle failed. */
  readonly item: string;
  /** pending/service: transient, retried while the drain time lasts; the others are final for this run. */
  readonly kind: 'pending' | 'service' | 'deferred' | 'failed' | 'unreadable';
  readonly reason: string;
  readonly code?: string;
}

export interface DrainResult {
  readonly totals: CycleTotals;
  /** Empty when nothing deliverable is left: the only case `once` exits 0. */
  readonly left: LeftItem[];
  readonly rounds: number;
  /** The drain time ran out with transient failures left. */
  readonly timedOut: boolean;
  /** The service could not be reached at all in the first round: the drain ended without waiting. */
  readonly unreachable: boolean;
}

/** How many mailboxes `once` drains at the same time. */
export const ONCE_MAILBOX_CONCURRENCY = 8;

/** Runs `fn` on every item, at most `limit` at a time. */
async function eachBounded<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await fn(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** What the journal holds unfinished for a mailbox's direction: where its progress starts. */
export async function unfinished(rt: DaemonRuntime, m: MailboxRuntime, direction: 'in' | 'out'): Promise<{ items: number; bytes: number }> {
  if (direction === 'in') {
    const rows = await new InboundJournal(rt.journal).inStates(m.mailboxId, INBOUND_UNFINISHED);
    return { items: rows.length, bytes: rows.reduce((n, r) => n + (r.declared_bytes ?? 0), 0) };
  }
  if (!m.outboxDir) return { items: 0, bytes: 0 };
  return { items: (await new OutboundJournal(rt.journal).inStates(m.mailboxId, m.outboxDir, OUTBOUND_UNFINISHED)).length, bytes: 0 };
}

/**
 * Drains every mailbox. `start.unreachable`: why the session check at open did not reach the
 * service, when it did not.
 */
export async function drain(rt: DaemonRuntime, progress: ProgressTracker, start: { unreachable?: string }): Promise<DrainResult> {
  const started = rt.now();
  const deadline = started + rt.config.once.drainTimeout;
  const totals = emptyTotals();
  for (const m of rt.mailboxes) {
    if (m.inbound) progress.begin(m.name, 'in', await unfinished(rt, m, 'in'));
    if (m.outbound) progress.begin(m.name, 'out', await unfinished(rt, m, 'out'));
  }
  for (let round = 1; ; round++) {
    progress.newRound();
    const cycleErrors: LeftItem[] = [];
    let inboundUnreachable = 0;
    let otherErrors = 0;
    const fail = (m: MailboxRuntime, direction: 'in' | 'out', err: unknown): void => {
      if (rt.signal.aborted) return;
      cycleErrors.push(cycleError(m.name, direction, err));
      if (direction === 'in' && err instanceof GridTransportError) inboundUnreachable++;
      else otherErrors++;
    };
    // Mailboxes drain side by side (a nightly job lasts about as long as its slowest mailbox);
    // within one, inbound goes before outbound as in `run`.
    await eachBounded(rt.mailboxes, ONCE_MAILBOX_CONCURRENCY, async (m) => {
      if (rt.signal.aborted) return;
      // Under a shared journal another instance may serve the mailbox: it is left to that one.
      if (rt.leases && !rt.leases.holds(m.mailboxId)) return;
      const signal = rt.leases ? rt.leases.signal(m.mailboxId, rt.signal) : rt.signal;
      const fresh = rt.leases?.takeFresh(m.mailboxId) === true || round === 1;
      if (m.inbound) {
        try {
          if (fresh) addCounts(totals.inbound, await m.inbound.recover({ signal }));
          addCounts(totals.inbound, await m.inbound.runCycle({ signal }));
        } catch (err) {
          fail(m, 'in', err);
        }
      }
      if (m.outbound) {
        try {
          if (fresh) addCounts(totals.outbound, await m.outbound.recover());
          addCounts(totals.outbound, await m.outbound.runCycle({ signal }));
        } catch (err) {
          fail(m, 'out', err);
        }
      }
    });
    // Not reachable from the start: the session check at open did not get through, and neither did
    // any call of the first round (every inbound list failed, nothing uploaded). Waiting out
    // drainTimeout would only delay the cron job's error mail.
    const inbound = rt.mailboxes.filter((m) => m.inbound).length;
    const reached = totals.inbound.listed + totals.inbound.confirmed + totals.outbound.uploaded + totals.outbound.archived;
    const unreachableFromStart =
      round === 1 && start.unreachable !== undefined && inboundUnreachable === inbound && otherErrors === 0 && reached === 0;
    const left = [...cycleErrors, ...(await leftItems(rt, started))];
    const retryable = left.filter((l) => l.kind === 'pending' || l.kind === 'service');
    const wait = Math.min(backoffDelay(round, 1000), deadline - rt.now());
    if (retryable.length === 0 || rt.signal.aborted || wait <= 0 || unreachableFromStart) {
      const result: DrainResult = {
        totals,
        left,
        rounds: round,
        timedOut: retryable.length > 0 && wait <= 0 && !rt.signal.aborted && !unreachableFromStart,
        unreachable: unreachableFromStart,
      };
      recordInJournal(rt, 'lastCycle', totals);
      recordInJournal(rt, 'lastOnce', {
        rounds: result.rounds,
        timedOut: result.timedOut,
        unreachable: result.unreachable,
        left: result.left,
      });
      return result;
    }
    rt.logger.info(
      { round, retryable: retryable.length, retryInMs: wait },
      'once: work left after a transient failure; another cycle after a pause',
    );
    await rt.sleep(wait, rt.signal).catch(() => undefined);
  }
}

/**
 * What this run leaves undelivered, each with its reason: journal rows not finished (pending: a
 * later cycle may finish them; deferred: a local condition holds them), rows that failed or went
 * to errorDir during this run, and listed parcels that cannot be acted on.
 */
async function leftItems(rt: DaemonRuntime, since: number): Promise<LeftItem[]> {
  const out: LeftItem[] = [];
  const inJournal = new InboundJournal(rt.journal);
  const outJournal = new OutboundJournal(rt.journal);
  for (const m of rt.mailboxes) {
    if (rt.leases && !rt.leases.holds(m.mailboxId)) continue; // another instance's to finish
    if (m.inbound) {
      for (const r of await inJournal.inStates(m.mailboxId, [...INBOUND_UNFINISHED, 'failed'])) {
        const item = `parcel ${r.parcel_id}${r.file_name ? ` (${r.file_name})` : ''}`;
        if (r.state === 'failed') {
          if (r.updated_at >= since) out.push({ mailbox: m.name, direction: 'in', item, kind: 'failed', reason: r.last_error ?? 'failed' });
          continue;
        }
        const held = m.inbound.heldLocally.get(r.parcel_id);
        if (held !== undefined) out.push({ mailbox: m.name, direction: 'in', item, kind: 'deferred', reason: held });
        else out.push({ mailbox: m.name, direction: 'in', item, kind: 'pending', reason: r.last_error ?? `not finished (${r.state})` });
      }
      for (const [id, u] of m.inbound.unreadable) {
        out.push({
          mailbox: m.name,
          direction: 'in',
          item: `parcel ${id}${u.fileName ? ` (${u.fileName})` : ''}`,
          kind: 'unreadable',
          reason: u.reason,
          code: u.code,
        });
      }
    }
    if (m.outbound && m.outboxDir) {
      for (const r of await outJournal.inStates(m.mailboxId, m.outboxDir, [...OUTBOUND_UNFINISHED, 'in_error'])) {
        if (r.state === 'in_error') {
          if (r.updated_at >= since)
            out.push({
              mailbox: m.name,
              direction: 'out',
              item: r.file_name,
              kind: 'failed',
              reason: r.last_error ?? 'moved to errorDir',
              ...(r.error_code ? { code: r.error_code } : {}),
            });
          continue;
        }
        const held = m.outbound.heldLocally.get(r.id);
        out.push({
          mailbox: m.name,
          direction: 'out',
          item: r.file_name,
          kind: held !== undefined ? 'deferred' : 'pending',
          reason: held ?? r.last_error ?? `not finished (${r.state})`,
        });
      }
    }
  }
  out.push(...(await orphanedWork(rt)));
  return out;
}

function cycleError(mailbox: string, direction: 'in' | 'out', err: unknown): LeftItem {
  const code = (err as { code?: unknown }).code;
  return {
    mailbox,
    direction,
    item: '(cycle)',
    kind: 'service',
    reason: describeConnectFailure(err),
    ...(typeof code === 'string' ? { code } : {}),
  };
}
