/**
 * Outbound journal: one row per file claimed from an outbox folder, and the named transitions of
 * docs/architecture.md#outbound-lifecycle. Each checks the previous state in one transaction and appends to
 * the event trail; each resolves once durable (group commit: `JournalStore.commit`), and is refused
 * when another instance holds the mailbox's lease.
 *
 *   claiming → claimed → uploading → uploaded → archived
 *                  ↑________↓ (not sent: retry)
 *   claiming | claimed | uploading → erroring (reason decided) → in_error (file + .error.json in errorDir)
 *   in_error → requeued (the file went back to the outbox; a new claim makes a new row)
 */
import path from 'node:path';
import { GridsyncError, scrubHeld } from '../errors/index.js';
import { setClause } from './set-clause.js';
import { processingName } from '../files/index.js';
import { pruneJudged, pruneRows, type CommitOptions, type JournalStore, type JournalTx } from './store.js';

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

/** A row in one of these states has work left: a cycle drives it on (a real run finishes it before anything new). */
export const OUTBOUND_UNFINISHED = ['claiming', 'claimed', 'uploading', 'uploaded', 'erroring'] as const satisfies readonly OutboundState[];

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
  /** The attempt's start in the service's time as its clock stood then; null when unknown then (or journalled before migration 3). */
  attempt_service_at: number | null;
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

const SELECT_ROW = 'SELECT * FROM outbound_files WHERE id = ?';
/** What a transition reads of the row it moves: the whole row built its other 15 fields for nothing. */
type TransitionRow = Pick<OutboundRow, 'id' | 'mailbox_id' | 'state' | 'attempts'>;
const SELECT_TRANSITION_ROW = 'SELECT id, mailbox_id, state, attempts FROM outbound_files WHERE id = ?';

/** The mark `requeue --force` leaves on the requeued row (its error_code): send the next copy anyway. */
const SEND_ANYWAY = 'OUTBOUND_SEND_ANYWAY';
/** `gridsync requeue` holds no lease: in_error is a final state no lease holder acts on (`CommitOptions.operator`). */
const OPERATOR = { operator: true } as const;

export class OutboundJournal {
  constructor(private readonly journal: JournalStore) {}

  get(id: number): Promise<OutboundRow | undefined> {
    return this.journal.get<OutboundRow>(SELECT_ROW, id);
  }

  inStates(mailboxId: number, outboxDir: string, states: readonly OutboundState[]): Promise<OutboundRow[]> {
    return this.journal.all<OutboundRow>(
      `SELECT * FROM outbound_files WHERE mailbox_id = ? AND outbox_dir = ? AND state IN (${states.map(() => '?').join(',')}) ORDER BY id`,
      mailboxId,
      outboxDir,
      ...states,
    );
  }

  /** Every outbox's rows in these states (the daemon looks for work no configured outbox drives). */
  everyInStates(states: readonly OutboundState[]): Promise<OutboundRow[]> {
    return this.journal.all<OutboundRow>(
      `SELECT * FROM outbound_files WHERE state IN (${states.map(() => '?').join(',')}) ORDER BY mailbox_id, id`,
      ...states,
    );
  }

  /**
   * Another row with the same content sent (or being sent) since `sinceMs`: the duplicate check.
   * Rows before the latest `requeue --force` of this content do not count: the operator asked for
   * that one file to be sent anyway, once — the copy it makes counts for the next.
   */
  duplicateOf(id: number, sha256: string, sinceMs: number): Promise<OutboundRow | undefined> {
    return this.journal.get<OutboundRow>(
      `SELECT * FROM outbound_files WHERE sha256 = ? AND id <> ? AND state IN ('claimed', 'uploading', 'uploaded', 'archived') AND updated_at >= ? AND id < ?
         AND id > COALESCE((SELECT MAX(id) FROM outbound_files WHERE sha256 = ? AND id < ? AND state = 'requeued' AND error_code = '${SEND_ANYWAY}'), 0)
       ORDER BY id LIMIT 1`,
      sha256,
      id,
      sinceMs,
      id,
      sha256,
      id,
    );
  }

  /**
   * An older row of the same outbox and file name whose upload's outcome is not known yet. The
   * outbox list tells parcels apart by name and size only: while one is unknown, another upload
   * of that name (a re-export of the same size) could be taken for it.
   */
  async olderUploading(row: Pick<OutboundRow, 'id' | 'mailbox_id' | 'outbox_dir' | 'file_name'>): Promise<boolean> {
    const found = await this.journal.get(
      "SELECT 1 AS one FROM outbound_files WHERE state = 'uploading' AND mailbox_id = ? AND outbox_dir = ? AND file_name = ? AND id < ? LIMIT 1",
      row.mailbox_id,
      row.outbox_dir,
      row.file_name,
      row.id,
    );
    return found !== undefined;
  }

  /** Parcel ids already adopted by a row: reconciliation must not adopt one twice. */
  async isAdopted(parcelId: number): Promise<boolean> {
    return (await this.journal.get('SELECT 1 AS one FROM outbound_files WHERE parcel_id = ?', parcelId)) !== undefined;
  }

  /** claiming: the intent to move `sourcePath` to `processingPath`, journalled before the rename. */
  markClaiming(mailboxId: number, outboxDir: string, fileName: string, sourcePath: string, processingDir: string): Promise<OutboundRow> {
    return this.journal.commit(async (tx) => {
      const now = this.journal.now();
      const { rows } = await tx.write<{ id: number }>(
        mailboxId,
        "INSERT INTO outbound_files (mailbox_id, outbox_dir, file_name, source_path, state, created_at, updated_at) VALUES (?, ?, ?, ?, 'claiming', ?, ?) RETURNING id",
        mailboxId,
        outboxDir,
        fileName,
        sourcePath,
        now,
        now,
      );
      const id = Number((rows[0] as { id: number }).id);
      const processingPath = path.join(processingDir, processingName(id, fileName));
      await tx.write(mailboxId, 'UPDATE outbound_files SET processing_path = ? WHERE id = ?', processingPath, id);
      await tx.recordEvent({
        direction: 'out',
        mailboxId,
        item: id,
        from: null,
        to: 'claiming',
        detail: { sourcePath, processingPath },
      });
      return (await tx.get<OutboundRow>(SELECT_ROW, id)) as OutboundRow;
    });
  }

  markClaimed(id: number, bytes: number, sha256: string): Promise<void> {
    return this.transition(id, 'claimed', { bytes, sha256 }, { bytes, sha256 });
  }

  /**
   * The attempt's start is journalled before the request goes out: the reconciliation window. By
   * our clock, and by the service's as far as its answers have shown it (null: none yet).
   */
  markUploading(id: number, attemptStartedAt: number, attemptServiceAt: number | null): Promise<void> {
    return this.journal.commit(async (tx) => {
      const row = await this.require(tx, id);
      await this.apply(
        tx,
        row,
        'uploading',
        { attempts: row.attempts + 1, attempt_started_at: attemptStartedAt, attempt_service_at: attemptServiceAt },
        { attempt: row.attempts + 1 },
      );
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

  /**
   * `gridsync requeue`, from beside the daemons: an operator's step (`CommitOptions.operator`).
   * `force`: the next claim of the same content skips the duplicate check (`requeue --force`).
   */
  markRequeued(id: number, force = false): Promise<void> {
    return this.transition(id, 'requeued', force ? { error_code: SEND_ANYWAY } : {}, force ? { force } : null, OPERATOR);
  }

  /**
   * An unknown upload whose reconciliation failed for good (the outbox list refused or unreadable):
   * counted as an attempt, so that it ends in errorDir after `maxAttempts` instead of being asked
   * about for ever. Returns the attempts now counted.
   */
  countReconcileFailure(id: number, reason: string): Promise<number> {
    return this.journal.commit(async (tx) => {
      const row = await this.require(tx, id);
      await tx.write(
        row.mailbox_id,
        'UPDATE outbound_files SET attempts = ?, last_error = ?, updated_at = ? WHERE id = ?',
        row.attempts + 1,
        scrubHeld(reason),
        this.journal.now(),
        id,
      );
      return row.attempts + 1;
    });
  }

  /** A note on a row that stays in its state. Best effort, never rejects (see InboundJournal.noteError). */
  noteError(id: number, reason: string): Promise<void> {
    return this.journal
      .commit(async (tx) => {
        const row = await this.require(tx, id);
        await tx.write(
          row.mailbox_id,
          'UPDATE outbound_files SET last_error = ?, updated_at = ? WHERE id = ?',
          scrubHeld(reason),
          this.journal.now(),
          id,
        );
      })
      .catch(() => undefined);
  }

  /** The in_error rows whose file sits at `finalPath` (for requeue). */
  inErrorAt(finalPath: string): Promise<OutboundRow[]> {
    return this.journal.all<OutboundRow>("SELECT * FROM outbound_files WHERE state = 'in_error' AND final_path = ?", finalPath);
  }

  async summary(limit = 10): Promise<{ counts: Record<string, number>; recentFailures: OutboundRow[] }> {
    const rows = await this.journal.all<{ state: string; n: number }>('SELECT state, count(*) AS n FROM outbound_files GROUP BY state');
    const counts = Object.fromEntries(rows.map((r) => [r.state, r.n]));
    const recentFailures = await this.journal.all<OutboundRow>(
      "SELECT * FROM outbound_files WHERE state IN ('erroring', 'in_error') ORDER BY updated_at DESC LIMIT ?",
      limit,
    );
    return { counts, recentFailures };
  }

  /** Retention: forget finished rows older than `olderThanMs`. */
  pruneFinished(olderThanMs: number): Promise<number> {
    return pruneRows(
      this.journal,
      'outbound_files',
      "state IN ('archived', 'requeued') AND updated_at < ?",
      this.journal.now() - olderThanMs,
    );
  }

  /**
   * Retention of in_error rows older than `olderThanMs` whose file `fileGone` says has left
   * errorDir (errorRetentionDays deleted it, an operator moved it, or it never got there: a null
   * path). While the file is there its row stays, whatever its age: `gridsync requeue` finds the
   * file's row by its path, and `requeue --force` marks that row. No duplicate check reads an
   * in_error row (`duplicateOf` counts sent rows and the requeued mark only), so nothing else is
   * lost with it. A row requeued meanwhile is not in_error any more and stays.
   */
  pruneInError(olderThanMs: number, fileGone: (finalPath: string | null) => Promise<boolean>): Promise<number> {
    return pruneJudged<Pick<OutboundRow, 'final_path'>>(
      this.journal,
      'outbound_files',
      'id',
      "state = 'in_error' AND updated_at < ?",
      [this.journal.now() - olderThanMs],
      (row) => fileGone(row.final_path),
    );
  }

  private async require(tx: JournalTx, id: number): Promise<TransitionRow> {
    const row = await tx.get<TransitionRow>(SELECT_TRANSITION_ROW, id);
    if (!row) throw new IllegalOutboundTransitionError(id, undefined, '(any)');
    return row;
  }

  private transition(
    id: number,
    to: OutboundState,
    set: Record<string, unknown>,
    detail: Record<string, unknown> | null,
    options?: CommitOptions,
  ): Promise<void> {
    return this.journal.commit(async (tx) => this.apply(tx, await this.require(tx, id), to, set, detail), options);
  }

  private async apply(
    tx: JournalTx,
    row: TransitionRow,
    to: OutboundState,
    set: Record<string, unknown>,
    detail: Record<string, unknown> | null,
  ): Promise<void> {
    if (!canTransitionOutbound(row.state, to)) throw new IllegalOutboundTransitionError(row.id, row.state, to);
    const { sql: assign, values } = setClause(set);
    // The update re-checks the state it read: an operator's step holds no lease that keeps others off the row.
    const { changes } = await tx.write(
      row.mailbox_id,
      `UPDATE outbound_files SET state = ?, updated_at = ?${assign} WHERE id = ? AND state = ?`,
      to,
      this.journal.now(),
      ...values,
      row.id,
      row.state,
    );
    if (changes === 0)
      throw new IllegalOutboundTransitionError(row.id, (await tx.get<TransitionRow>(SELECT_TRANSITION_ROW, row.id))?.state, to);
    await tx.recordEvent({ direction: 'out', mailboxId: row.mailbox_id, item: row.id, from: row.state, to, detail });
  }
}
