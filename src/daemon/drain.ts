/**
 * `gridsync once`: recovery, then cycles of every mailbox until nothing deliverable is left, or
 * only final failures are, or `once.drainTimeout` runs out while transient ones remain. The result
 * names every item left undelivered and why: a scheduler running `once` must see each of them.
 */
import { InboundJournal, OutboundJournal } from '../journal/index.js';
import { describeConnectFailure } from './connect.js';
import type { ProgressTracker } from './progress.js';
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
}

const INBOUND_UNFINISHED = ['listed', 'downloading', 'staged', 'placed'] as const;
const OUTBOUND_UNFINISHED = ['claiming', 'claimed', 'uploading', 'uploaded', 'erroring'] as const;

/** What the journal holds unfinished for a mailbox's direction: where its progress starts. */
export function unfinished(rt: DaemonRuntime, m: MailboxRuntime, direction: 'in' | 'out'): { items: number; bytes: number } {
  if (direction === 'in') {
    const rows = new InboundJournal(rt.journal).inStates(m.mailboxId, INBOUND_UNFINISHED);
    return { items: rows.length, bytes: rows.reduce((n, r) => n + (r.declared_bytes ?? 0), 0) };
  }
  if (!m.outboxDir) return { items: 0, bytes: 0 };
  return { items: new OutboundJournal(rt.journal).inStates(m.mailboxId, m.outboxDir, OUTBOUND_UNFINISHED).length, bytes: 0 };
}

export async function drain(rt: DaemonRuntime, progress: ProgressTracker): Promise<DrainResult> {
  const started = rt.now();
  const deadline = started + rt.config.once.drainTimeout;
  const totals = emptyTotals();
  for (const m of rt.mailboxes) {
    if (m.inbound) progress.begin(m.name, 'in', unfinished(rt, m, 'in'));
    if (m.outbound) progress.begin(m.name, 'out', unfinished(rt, m, 'out'));
  }
  for (let round = 1; ; round++) {
    progress.newRound();
    const cycleErrors: LeftItem[] = [];
    for (const m of rt.mailboxes) {
      if (rt.signal.aborted) break;
      if (m.inbound) {
        try {
          if (round === 1) addCounts(totals.inbound, await m.inbound.recover());
          addCounts(totals.inbound, await m.inbound.runCycle({ signal: rt.signal }));
        } catch (err) {
          if (!rt.signal.aborted) cycleErrors.push(cycleError(m.name, 'in', err));
        }
      }
      if (m.outbound) {
        try {
          if (round === 1) addCounts(totals.outbound, await m.outbound.recover());
          addCounts(totals.outbound, await m.outbound.runCycle({ signal: rt.signal }));
        } catch (err) {
          if (!rt.signal.aborted) cycleErrors.push(cycleError(m.name, 'out', err));
        }
      }
    }
    const left = [...cycleErrors, ...leftItems(rt, started)];
    const retryable = left.filter((l) => l.kind === 'pending' || l.kind === 'service');
    const wait = Math.min(backoffDelay(round, 1000), deadline - rt.now());
    if (retryable.length === 0 || rt.signal.aborted || wait <= 0) {
      const result: DrainResult = {
        totals,
        left,
        rounds: round,
        timedOut: retryable.length > 0 && wait <= 0 && !rt.signal.aborted,
      };
      recordInJournal(rt, 'lastCycle', totals);
      recordInJournal(rt, 'lastOnce', { rounds: result.rounds, timedOut: result.timedOut, left: result.left });
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
function leftItems(rt: DaemonRuntime, since: number): LeftItem[] {
  const out: LeftItem[] = [];
  const inJournal = new InboundJournal(rt.journal);
  const outJournal = new OutboundJournal(rt.journal);
  for (const m of rt.mailboxes) {
    if (m.inbound) {
      for (const r of inJournal.inStates(m.mailboxId, [...INBOUND_UNFINISHED, 'failed'])) {
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
      for (const r of outJournal.inStates(m.mailboxId, m.outboxDir, [...OUTBOUND_UNFINISHED, 'in_error'])) {
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
        out.push({
          mailbox: m.name,
          direction: 'out',
          item: r.file_name,
          kind: 'pending',
          reason: r.last_error ?? `not finished (${r.state})`,
        });
      }
    }
  }
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
