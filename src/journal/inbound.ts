/**
 * Inbound journal: one row per (mailboxId, parcelId) and the named transitions of
 * docs/architecture.md#inbound-lifecycle. Each transition checks the previous state inside its own savepoint and
 * appends to the event trail; it resolves once durable (group commit: `Journal.commit`). The
 * pipelines never write SQL.
 *
 *   listed → staged → placed → confirmed
 *      ↑_____↓ (attempt failed, retried)    failed (reason; after maxAttempts)
 *   confirmed → listed (redelivery: reset on the service on purpose; delivery + 1)
 *
 * `downloading` is no longer written: the download's start carries nothing a crash needs (the
 * .part's path follows from the parcel id and a new attempt rewrites it from the start), and its
 * commit was a quarter of the journal's writes per parcel. Journals written by older versions may
 * still hold rows in that state; they are recovered like `listed`.
 */
import { GridsyncError, scrubHeld } from '../errors/index.js';
import type { Journal } from './db.js';

export const INBOUND_STATES = ['listed', 'downloading', 'staged', 'placed', 'confirmed', 'failed'] as const;
export type InboundState = (typeof INBOUND_STATES)[number];

/** The legal transitions: target state → the states it may come from. */
export const INBOUND_TRANSITIONS: Readonly<Record<InboundState, readonly InboundState[]>> = {
  listed: ['listed', 'downloading', 'staged', 'confirmed', 'failed'],
  downloading: ['listed', 'downloading'],
  staged: ['listed', 'downloading', 'staged'],
  placed: ['staged'],
  confirmed: ['placed'],
  failed: ['listed', 'downloading', 'staged', 'placed'],
};

export const canTransition = (from: InboundState, to: InboundState): boolean => INBOUND_TRANSITIONS[to].includes(from);

export class IllegalTransitionError extends GridsyncError {
  readonly code = 'JOURNAL_ILLEGAL_TRANSITION';
  constructor(
    readonly mailboxId: number,
    readonly parcelId: number,
    readonly from: string | undefined,
    readonly to: string,
  ) {
    super(`inbound parcel ${parcelId} (mailbox ${mailboxId}): illegal transition ${from ?? '(none)'} → ${to}`);
  }
}

export interface InboundRow {
  mailbox_id: number;
  parcel_id: number;
  state: InboundState;
  delivery: number;
  file_name: string | null;
  declared_bytes: number | null;
  grid_id_from: number | null;
  grid_id_to: number | null;
  service_created: string | null;
  staging_path: string | null;
  final_path: string | null;
  bytes: number | null;
  sha256: string | null;
  attempts: number;
  last_error: string | null;
  first_seen_at: number;
  updated_at: number;
}

export interface ListedParcel {
  readonly parcelId: number;
  readonly fileName?: string | null;
  readonly bytes?: number;
  readonly gridIdFrom?: number;
  readonly gridIdTo?: number;
  readonly created?: string;
}

export interface InboundJournalOptions {
  /**
   * Whether a transition may linger for company now (group commit, `CommitOptions.linger`): true
   * while other parcels are in flight. A lone parcel's transitions never wait.
   */
  readonly mayLinger?: () => boolean;
}

export class InboundJournal {
  constructor(
    private readonly journal: Journal,
    private readonly options: InboundJournalOptions = {},
  ) {}

  get(mailboxId: number, parcelId: number): InboundRow | undefined {
    return this.journal.statement('SELECT * FROM inbound_parcels WHERE mailbox_id = ? AND parcel_id = ?').get(mailboxId, parcelId) as
      InboundRow | undefined;
  }

  /** Rows of a mailbox in the given states, oldest first. */
  inStates(mailboxId: number, states: readonly InboundState[]): InboundRow[] {
    return this.journal
      .statement(
        `SELECT * FROM inbound_parcels WHERE mailbox_id = ? AND state IN (${states.map(() => '?').join(',')}) ORDER BY first_seen_at, parcel_id`,
      )
      .all(mailboxId, ...states) as InboundRow[];
  }

  /** Final paths chosen by parcels not yet confirmed: a new parcel must not take one of them. */
  reservedPaths(): Set<string> {
    const rows = this.journal
      .statement("SELECT final_path FROM inbound_parcels WHERE state IN ('staged', 'placed') AND final_path IS NOT NULL")
      .all() as { final_path: string }[];
    return new Set(rows.map((r) => r.final_path));
  }

  /** First sight of a parcel in the pending list. Returns false when it was already known. */
  recordListed(mailboxId: number, p: ListedParcel): Promise<boolean> {
    return this.journal.commit(() => {
      if (this.get(mailboxId, p.parcelId)) return false;
      const now = this.journal.now();
      this.journal
        .statement(
          `INSERT INTO inbound_parcels (mailbox_id, parcel_id, state, file_name, declared_bytes, grid_id_from, grid_id_to, service_created, first_seen_at, updated_at)
           VALUES (?, ?, 'listed', ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          mailboxId,
          p.parcelId,
          p.fileName ?? null,
          p.bytes ?? null,
          p.gridIdFrom ?? null,
          p.gridIdTo ?? null,
          p.created ?? null,
          now,
          now,
        );
      this.journal.recordEvent({
        direction: 'in',
        mailboxId,
        item: p.parcelId,
        from: null,
        to: 'listed',
        detail: { fileName: p.fileName ?? null, bytes: p.bytes ?? null },
      });
      return true;
    });
  }

  markStaged(
    mailboxId: number,
    parcelId: number,
    s: { stagingPath: string; bytes: number; sha256: string; finalPath: string; fileName: string | null },
  ): Promise<void> {
    return this.transition(
      mailboxId,
      parcelId,
      'staged',
      { staging_path: s.stagingPath, bytes: s.bytes, sha256: s.sha256, final_path: s.finalPath, file_name: s.fileName },
      { stagingPath: s.stagingPath, bytes: s.bytes, sha256: s.sha256, finalPath: s.finalPath },
    );
  }

  markPlaced(mailboxId: number, parcelId: number): Promise<void> {
    return this.transition(mailboxId, parcelId, 'placed', {}, null);
  }

  markConfirmed(mailboxId: number, parcelId: number, how: 'confirmed' | 'already-transferred'): Promise<void> {
    return this.transition(mailboxId, parcelId, 'confirmed', { last_error: null }, { how });
  }

  markFailed(mailboxId: number, parcelId: number, reason: string): Promise<void> {
    return this.transition(mailboxId, parcelId, 'failed', { last_error: reason }, { reason });
  }

  /**
   * A failed attempt (download broke, content did not verify): back to `listed` to be retried,
   * or `failed` once `maxAttempts` is reached. Returns the new state.
   */
  recordAttemptFailure(mailboxId: number, parcelId: number, reason: string, maxAttempts: number): Promise<InboundState> {
    return this.journal.commit(() => {
      const row = this.require(mailboxId, parcelId);
      const attempts = row.attempts + 1;
      const to: InboundState = attempts >= maxAttempts ? 'failed' : 'listed';
      this.apply(row, to, { attempts, last_error: reason, staging_path: null }, { reason, attempts });
      return to;
    });
  }

  /** A note on a row that stays in its state (a confirm to retry, a full disk). */
  noteError(mailboxId: number, parcelId: number, reason: string): void {
    this.journal
      .statement('UPDATE inbound_parcels SET last_error = ?, updated_at = ? WHERE mailbox_id = ? AND parcel_id = ?')
      .run(scrubHeld(reason), this.journal.now(), mailboxId, parcelId);
  }

  /**
   * staged → listed without counting an attempt: the staging file vanished before it was placed
   * (removed by someone else), so the content must be downloaded again and its name chosen again.
   */
  markStagingLost(mailboxId: number, parcelId: number, reason: string): Promise<void> {
    return this.transition(
      mailboxId,
      parcelId,
      'listed',
      { last_error: reason, final_path: null, staging_path: null, bytes: null, sha256: null },
      { stagingLost: reason },
    );
  }

  /** A confirmed parcel is InBoxReady again on the service: deliver it once more. */
  markRedelivery(mailboxId: number, parcelId: number): Promise<number> {
    return this.journal.commit(() => {
      const row = this.require(mailboxId, parcelId);
      const delivery = row.delivery + 1;
      this.apply(
        row,
        'listed',
        { delivery, attempts: 0, last_error: null, final_path: null, staging_path: null, bytes: null, sha256: null },
        { redelivery: delivery },
      );
      return delivery;
    });
  }

  /** Counts per state and the most recent failures, for `gridsync status` and metrics. */
  summary(limit = 10): { counts: Record<string, number>; recentFailures: InboundRow[] } {
    const counts = Object.fromEntries(
      (
        this.journal.statement('SELECT state, count(*) AS n FROM inbound_parcels GROUP BY state').all() as { state: string; n: number }[]
      ).map((r) => [r.state, r.n]),
    );
    const recentFailures = this.journal
      .statement("SELECT * FROM inbound_parcels WHERE state = 'failed' ORDER BY updated_at DESC LIMIT ?")
      .all(limit) as InboundRow[];
    return { counts, recentFailures };
  }

  /** Retention: forget confirmed rows older than `olderThanMs`. */
  pruneConfirmed(olderThanMs: number): number {
    return this.journal
      .statement("DELETE FROM inbound_parcels WHERE state = 'confirmed' AND updated_at < ?")
      .run(this.journal.now() - olderThanMs).changes;
  }

  private require(mailboxId: number, parcelId: number): InboundRow {
    const row = this.get(mailboxId, parcelId);
    if (!row) throw new IllegalTransitionError(mailboxId, parcelId, undefined, '(any)');
    return row;
  }

  private transition(
    mailboxId: number,
    parcelId: number,
    to: InboundState,
    set: Record<string, unknown>,
    detail: Record<string, unknown> | null,
  ): Promise<void> {
    // Parcels in flight together may share transactions (see InboundJournalOptions).
    const linger = this.options.mayLinger?.() ?? false;
    return this.journal.commit(() => this.apply(this.require(mailboxId, parcelId), to, set, detail), { linger });
  }

  private apply(row: InboundRow, to: InboundState, set: Record<string, unknown>, detail: Record<string, unknown> | null): void {
    if (!canTransition(row.state, to)) throw new IllegalTransitionError(row.mailbox_id, row.parcel_id, row.state, to);
    const cols = Object.keys(set);
    const now = this.journal.now();
    this.journal
      .statement(
        `UPDATE inbound_parcels SET state = ?, updated_at = ?${cols.map((c) => `, ${c} = ?`).join('')} WHERE mailbox_id = ? AND parcel_id = ?`,
      )
      .run(
        to,
        now,
        ...cols.map((c) => (c === 'last_error' && typeof set[c] === 'string' ? scrubHeld(set[c]) : set[c])),
        row.mailbox_id,
        row.parcel_id,
      );
    this.journal.recordEvent({ direction: 'in', mailboxId: row.mailbox_id, item: row.parcel_id, from: row.state, to, detail });
  }
}
