/**
 * Outbound journal: one row per file claimed from an outbox folder, and the named transitions of
 * docs/architecture.md#outbound-lifecycle. Each checks the previous state in one transaction and appends to
 * the event trail; each resolves once durable (group commit: `Journal.commit`).
 *
 *   claiming → claimed → uploading → uploaded → archived
 *                  ↑________↓ (not sent: retry)
 *   claiming | claimed | uploading → erroring (reason decided) → in_error (file + .error.json in errorDir)
 *   in_error → requeued (the file went back to the outbox; a new claim makes a new row)
 */
import path from 'node:path';
import { GridsyncError, scrubHeld } from '../errors/index.js';
import { processingName } from '../files/index.js';
import type { Journal } from './db.js';

export const OUTBOUND_STATES = ['claiming', 'claimed', 'uploading', 'uploaded', 'archived', 'erroring', 'in_error', 'requeued'] as const;
export type OutboundState = (typeof OUTBOUND_STATES)[number];

export const OUTBOUND_TRANSITIONS: Readonly<Record<OutboundState, readonly OutboundState[]>> = {
  claiming: [],
  claimed: ['claiming', 'uploading'],
  uploading: ['claimed', 'uploading'],
  uploaded: ['uploading'],
  archived: ['uploaded'],
  erroring: ['claiming', 'claimed', 'uploading'],
  in_error: ['erroring'],
  requeued: ['in_error'],
};

export const canTransitionOutbound = (from: OutboundState, to: OutboundState): boolean => OUTBOUND_TRANSITIONS[to].includes(from);

export class IllegalOutboundTransitionError extends GridsyncError {
  readonly code = 'JOURNAL_ILLEGAL_TRANSITION';
  constructor(
    readonly id: number,
    readonly from: string | undefined,
    readonly to: string,
  ) {
    super(`outbound file #${id}: illegal transition ${from ?? '(none)'} → ${to}`);
  }
}

export interface OutboundRow {
  id: number;
  mailbox_id: number;
  outbox_dir: string;
  file_name: string;
  source_path: string;
  processing_path: string | null;
  state: OutboundState;
  bytes: number | null;
  sha256: string | null;
  attempts: number;
  attempt_started_at: number | null;
  parcel_id: number | null;
  final_path: string | null;
  error_code: string | null;
  http_status: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
}

export interface ErrorDecision {
  readonly reason: string;
  readonly errorCode?: string | null;
  readonly httpStatus?: number | null;
}

export class OutboundJournal {
  constructor(private readonly journal: Journal) {}

  get(id: number): OutboundRow | undefined {
    return this.journal.statement('SELECT * FROM outbound_files WHERE id = ?').get(id) as OutboundRow | undefined;
  }

  inStates(mailboxId: number, outboxDir: string, states: readonly OutboundState[]): OutboundRow[] {
    return this.journal
      .statement(
        `SELECT * FROM outbound_files WHERE mailbox_id = ? AND outbox_dir = ? AND state IN (${states.map(() => '?').join(',')}) ORDER BY id`,
      )
      .all(mailboxId, outboxDir, ...states) as OutboundRow[];
  }

  /** Another row with the same content sent (or being sent) since `sinceMs`: the duplicate check. */
  duplicateOf(id: number, sha256: string, sinceMs: number): OutboundRow | undefined {
    return this.journal
      .statement(
        "SELECT * FROM outbound_files WHERE sha256 = ? AND id <> ? AND state IN ('claimed', 'uploading', 'uploaded', 'archived') AND updated_at >= ? AND id < ? ORDER BY id LIMIT 1",
      )
      .get(sha256, id, sinceMs, id) as OutboundRow | undefined;
  }

  /** Parcel ids already adopted by a row: reconciliation must not adopt one twice. */
  isAdopted(parcelId: number): boolean {
    return this.journal.statement('SELECT 1 FROM outbound_files WHERE parcel_id = ?').get(parcelId) !== undefined;
  }

  /** claiming: the intent to move `sourcePath` to `processingPath`, journalled before the rename. */
  markClaiming(mailboxId: number, outboxDir: string, fileName: string, sourcePath: string, processingDir: string): Promise<OutboundRow> {
    return this.journal.commit(() => {
      const now = this.journal.now();
      const { lastInsertRowid } = this.journal
        .statement(
          "INSERT INTO outbound_files (mailbox_id, outbox_dir, file_name, source_path, state, created_at, updated_at) VALUES (?, ?, ?, ?, 'claiming', ?, ?)",
        )
        .run(mailboxId, outboxDir, fileName, sourcePath, now, now);
      const id = Number(lastInsertRowid);
      const processingPath = path.join(processingDir, processingName(id, fileName));
      this.journal.statement('UPDATE outbound_files SET processing_path = ? WHERE id = ?').run(processingPath, id);
      this.journal.recordEvent({
        direction: 'out',
        mailboxId,
        item: id,
        from: null,
        to: 'claiming',
        detail: { sourcePath, processingPath },
      });
      return this.get(id) as OutboundRow;
    });
  }

  markClaimed(id: number, bytes: number, sha256: string): Promise<void> {
    return this.transition(id, 'claimed', { bytes, sha256 }, { bytes, sha256 });
  }

  /** The attempt's start is journalled before the request goes out: the reconciliation window. */
  markUploading(id: number, attemptStartedAt: number): Promise<void> {
    return this.journal.commit(() => {
      const row = this.require(id);
      this.apply(row, 'uploading', { attempts: row.attempts + 1, attempt_started_at: attemptStartedAt }, { attempt: row.attempts + 1 });
    });
  }

  /** The attempt provably did not reach the service: back to claimed (its count is kept). */
  markNotSent(id: number, reason: string): Promise<void> {
    return this.transition(id, 'claimed', { last_error: reason }, { reason });
  }

  markUploaded(id: number, parcelId: number, how: 'uploaded' | 'reconciled'): Promise<void> {
    return this.transition(id, 'uploaded', { parcel_id: parcelId, last_error: null }, { parcelId, how });
  }

  markArchived(id: number, finalPath: string | null): Promise<void> {
    return this.transition(id, 'archived', { final_path: finalPath }, { finalPath });
  }

  markErroring(id: number, d: ErrorDecision): Promise<void> {
    return this.transition(
      id,
      'erroring',
      { last_error: d.reason, error_code: d.errorCode ?? null, http_status: d.httpStatus ?? null },
      { ...d },
    );
  }

  markInError(id: number, finalPath: string | null): Promise<void> {
    return this.transition(id, 'in_error', { final_path: finalPath }, { finalPath });
  }

  markRequeued(id: number): Promise<void> {
    return this.transition(id, 'requeued', {}, null);
  }

  noteError(id: number, reason: string): void {
    this.journal
      .statement('UPDATE outbound_files SET last_error = ?, updated_at = ? WHERE id = ?')
      .run(scrubHeld(reason), this.journal.now(), id);
  }

  /** The in_error rows whose file sits at `finalPath` (for requeue). */
  inErrorAt(finalPath: string): OutboundRow[] {
    return this.journal
      .statement("SELECT * FROM outbound_files WHERE state = 'in_error' AND final_path = ?")
      .all(finalPath) as OutboundRow[];
  }

  summary(limit = 10): { counts: Record<string, number>; recentFailures: OutboundRow[] } {
    const counts = Object.fromEntries(
      (
        this.journal.statement('SELECT state, count(*) AS n FROM outbound_files GROUP BY state').all() as { state: string; n: number }[]
      ).map((r) => [r.state, r.n]),
    );
    const recentFailures = this.journal
      .statement("SELECT * FROM outbound_files WHERE state IN ('erroring', 'in_error') ORDER BY updated_at DESC LIMIT ?")
      .all(limit) as OutboundRow[];
    return { counts, recentFailures };
  }

  /** Retention: forget finished rows older than `olderThanMs`. */
  pruneFinished(olderThanMs: number): number {
    return this.journal
      .statement("DELETE FROM outbound_files WHERE state IN ('archived', 'requeued') AND updated_at < ?")
      .run(this.journal.now() - olderThanMs).changes;
  }

  private require(id: number): OutboundRow {
    const row = this.get(id);
    if (!row) throw new IllegalOutboundTransitionError(id, undefined, '(any)');
    return row;
  }

  private transition(id: number, to: OutboundState, set: Record<string, unknown>, detail: Record<string, unknown> | null): Promise<void> {
    return this.journal.commit(() => this.apply(this.require(id), to, set, detail));
  }

  private apply(row: OutboundRow, to: OutboundState, set: Record<string, unknown>, detail: Record<string, unknown> | null): void {
    if (!canTransitionOutbound(row.state, to)) throw new IllegalOutboundTransitionError(row.id, row.state, to);
    const cols = Object.keys(set);
    this.journal
      .statement(`UPDATE outbound_files SET state = ?, updated_at = ?${cols.map((c) => `, ${c} = ?`).join('')} WHERE id = ?`)
      .run(
        to,
        this.journal.now(),
        ...cols.map((c) => (c === 'last_error' && typeof set[c] === 'string' ? scrubHeld(set[c]) : set[c])),
        row.id,
      );
    this.journal.recordEvent({ direction: 'out', mailboxId: row.mailbox_id, item: row.id, from: row.state, to, detail });
  }
}
