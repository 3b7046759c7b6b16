/**
 * Inbound journal: one row per (mailboxId, parcelId) and the named transitions of
 * docs/architecture.md#inbound-lifecycle. Each transition checks the previous state in the very
 * update that changes it and appends to the event trail; it resolves once durable (group commit:
 * `JournalStore.commit`), and is refused when another instance holds the mailbox's lease. The
 * pipelines never write SQL.
 *
 *   listed → staged → placed → confirmed
 *      ↑_____↓ (attempt failed, retried)    failed (reason; after maxAttempts)
 *   confirmed → listed (redelivery: reset on the service on purpose; delivery + 1)
 *   listed ⇄ taken (off a complete pending list before its download: confirmed or removed by
 *                   someone else; pending again later, it is delivered)
 *
 * `downloading` is no longer written: the download's start carries nothing a crash needs (the
 * .part's path follows from the parcel id and a new attempt rewrites it from the start), and its
 * commit was a quarter of the journal's writes per parcel. Journals written by older versions may
 * still hold rows in that state; they are recovered like `listed`.
 */
import { GridsyncError, scrubHeld } from '../errors/index.js';
import { inChunks } from './id-lists.js';
import { setClause } from './set-clause.js';
import { pruneRows, type JournalStore, type JournalTx } from './store.js';

export const INBOUND_STATES = ['listed', 'downloading', 'staged', 'placed', 'confirmed', 'failed', 'taken'] as const;
export type InboundState = (typeof INBOUND_STATES)[number];

/** The legal transitions: target state → the states it may come from. */
export const INBOUND_TRANSITIONS: Readonly<Record<InboundState, readonly InboundState[]>> = {
  listed: ['listed', 'downloading', 'staged', 'confirmed', 'failed', 'taken'],
  downloading: ['listed', 'downloading'],
  staged: ['listed', 'downloading', 'staged'],
  placed: ['staged'],
  confirmed: ['placed'],
  failed: ['listed', 'downloading', 'staged', 'placed'],
  taken: ['listed', 'downloading'],
};

/** A row in one of these states has work left: a cycle drives it on (a real run finishes it before anything new). */
export const INBOUND_UNFINISHED = ['listed', 'downloading', 'staged', 'placed'] as const satisfies readonly InboundState[];

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
  /** 1 while a confirm of ours has not been seen to take (the parcel not yet seen to leave `InBoxReady`). */
  confirm_unverified: number;
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

/** A parcel's own commits touch its row and the event trail only (`CommitOptions.independent`). */
const INDEPENDENT = { independent: true } as const;
const SELECT_ROW = 'SELECT * FROM inbound_parcels WHERE mailbox_id = ? AND parcel_id = ?';
/** A transition needs the state it leaves only: reading the whole row built its 18 other fields for nothing. */
const SELECT_STATE = 'SELECT state FROM inbound_parcels WHERE mailbox_id = ? AND parcel_id = ?';
/** Only a confirmed row's confirm can be seen to take; the state re-checked keeps an operator's write (markResetRequested) off a row moved meanwhile. */
const CONFIRM_SEEN = "UPDATE inbound_parcels SET confirm_unverified = 0 WHERE mailbox_id = ? AND parcel_id = ? AND state = 'confirmed'";
const FINISHED_BEFORE = "state IN ('confirmed', 'taken') AND updated_at < ?";

/** The audit-trail event `gridsync redeliver` records for a parcel it had the service reset. */
export const REDELIVERY_REQUESTED = 'redelivery-requested';

export class InboundJournal {
  constructor(
    private readonly journal: JournalStore,
    private readonly options: InboundJournalOptions = {},
  ) {}

  get(mailboxId: number, parcelId: number): Promise<InboundRow | undefined> {
    return this.journal.get<InboundRow>(SELECT_ROW, mailboxId, parcelId);
  }

  /**
   * The rows of many parcels in a few reads (by parcel id; absent: not known). A pending list read
   * row by row costs a round trip per parcel on PostgreSQL, where SQLite's reads are function calls.
   */
  async getMany(mailboxId: number, parcelIds: readonly number[]): Promise<Map<number, InboundRow>> {
    const rows = await inChunks(parcelIds, (marks, ids) =>
      this.journal.all<InboundRow>(`SELECT * FROM inbound_parcels WHERE mailbox_id = ? AND parcel_id IN (${marks})`, mailboxId, ...ids),
    );
    return new Map(rows.map((r) => [r.parcel_id, r]));
  }

  /** How many of the mailbox's parcels were given up on (`failed`): the service lists those it has not dropped. */
  async failedCount(mailboxId: number): Promise<number> {
    const r = await this.journal.get<{ n: number }>(
      "SELECT count(*) AS n FROM inbound_parcels WHERE mailbox_id = ? AND state = 'failed'",
      mailboxId,
    );
    return r?.n ?? 0;
  }

  /** Rows of a mailbox in the given states, oldest first. */
  inStates(mailboxId: number, states: readonly InboundState[]): Promise<InboundRow[]> {
    return this.journal.all<InboundRow>(
      `SELECT * FROM inbound_parcels WHERE mailbox_id = ? AND state IN (${states.map(() => '?').join(',')}) ORDER BY first_seen_at, parcel_id`,
      mailboxId,
      ...states,
    );
  }

  /** Every mailbox's rows in these states (the daemon looks for work no configured mailbox drives). */
  everyInStates(states: readonly InboundState[]): Promise<InboundRow[]> {
    return this.journal.all<InboundRow>(
      `SELECT * FROM inbound_parcels WHERE state IN (${states.map(() => '?').join(',')}) ORDER BY mailbox_id, first_seen_at, parcel_id`,
      ...states,
    );
  }

  /** Final paths chosen by parcels not yet confirmed: a new parcel must not take one of them. */
  async reservedPaths(): Promise<Set<string>> {
    const rows = await this.journal.all<{ final_path: string }>(
      "SELECT final_path FROM inbound_parcels WHERE state IN ('staged', 'placed') AND final_path IS NOT NULL",
    );
    return new Set(rows.map((r) => r.final_path));
  }

  /** First sight of a parcel in the pending list. Returns false when it was already known. */
  recordListed(mailboxId: number, p: ListedParcel): Promise<boolean> {
    return this.journal.commit(async (tx) => {
      const now = this.journal.now();
      // One statement, not a read then an insert: on PostgreSQL each is a round trip.
      const { changes } = await tx.write(
        mailboxId,
        `INSERT INTO inbound_parcels (mailbox_id, parcel_id, state, file_name, declared_bytes, grid_id_from, grid_id_to, service_created, first_seen_at, updated_at)
         VALUES (?, ?, 'listed', ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (mailbox_id, parcel_id) DO NOTHING`,
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
      if (changes === 0) return false;
      await tx.recordEvent({
        direction: 'in',
        mailboxId,
        item: p.parcelId,
        from: null,
        to: 'listed',
        detail: { fileName: p.fileName ?? null, bytes: p.bytes ?? null },
      });
      return true;
    }, INDEPENDENT);
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

  /**
   * staged → staged under another final name: the one journalled was found taken in the inbox when
   * the parcel was to be placed (collision `unique`), or lies outside the inbox since `inbox.dir`
   * changed. Only a staged row: any other has no name to change.
   */
  markFinalPathTaken(mailboxId: number, parcelId: number, taken: string, finalPath: string): Promise<void> {
    return this.transition(mailboxId, parcelId, 'staged', { final_path: finalPath }, { taken, finalPath }, ['staged']);
  }

  markPlaced(mailboxId: number, parcelId: number): Promise<void> {
    return this.transition(mailboxId, parcelId, 'placed', {}, null);
  }

  /** `confirmed`: the service answered our confirm, which is yet to be seen to take; `already-confirmed`: a read-back showed it. */
  markConfirmed(mailboxId: number, parcelId: number, how: 'confirmed' | 'already-confirmed'): Promise<void> {
    return this.transition(
      mailboxId,
      parcelId,
      'confirmed',
      { last_error: null, confirm_unverified: how === 'confirmed' ? 1 : 0 },
      { how },
    );
  }

  /** Confirmed parcels of the mailbox whose confirm has not been seen to take yet. */
  async unverifiedConfirms(mailboxId: number): Promise<number[]> {
    const rows = await this.journal.all<{ parcel_id: number }>(
      'SELECT parcel_id FROM inbound_parcels WHERE mailbox_id = ? AND confirm_unverified = 1',
      mailboxId,
    );
    return rows.map((r) => r.parcel_id);
  }

  /** These parcels were seen to leave `InBoxReady` after our confirm: listed ready again, they are a redelivery. */
  markConfirmsSeen(mailboxId: number, parcelIds: readonly number[]): Promise<void> {
    if (parcelIds.length === 0) return Promise.resolve();
    return this.journal.commit(async (tx) => {
      for (const id of parcelIds) await tx.write(mailboxId, CONFIRM_SEEN, mailboxId, id);
    });
  }

  /**
   * An operator had the service reset this parcel (`gridsync redeliver`): the trail notes it
   * (`lastRedeliveryRequests`), and listed ready again it is a redelivery, whether or not its confirm
   * was seen to take — in every mailbox that has it. An operator's step, from beside the daemons
   * (`CommitOptions.operator`): it clears only the mark the holder clears itself once it sees a
   * confirm take, on confirmed rows only.
   */
  markResetRequested(parcelId: number): Promise<void> {
    return this.journal.commit(
      async (tx) => {
        await tx.recordEvent({ direction: 'in', item: parcelId, to: REDELIVERY_REQUESTED, detail: { by: 'gridsync redeliver' } });
        const rows = await tx.all<{ mailbox_id: number }>(
          'SELECT mailbox_id FROM inbound_parcels WHERE parcel_id = ? AND confirm_unverified = 1',
          parcelId,
        );
        for (const r of rows) await tx.write(r.mailbox_id, CONFIRM_SEEN, r.mailbox_id, parcelId);
      },
      { operator: true },
    );
  }

  /**
   * When an operator last asked for each of these parcels again (`gridsync redeliver`), by parcel
   * id; absent: never. The trail notes a request in no mailbox (`markResetRequested`). Read for a
   * whole pending list at once, as `getMany` is.
   */
  async lastRedeliveryRequests(parcelIds: readonly number[]): Promise<Map<number, number>> {
    const rows = await inChunks(parcelIds.map(String), (marks, items) =>
      this.journal.all<{ item: string; at: number }>(
        `SELECT item, max(at) AS at FROM events WHERE direction = 'in' AND to_state = ? AND item IN (${marks}) GROUP BY item`,
        REDELIVERY_REQUESTED,
        ...items,
      ),
    );
    return new Map(rows.map((r) => [Number(r.item), r.at]));
  }

  markFailed(mailboxId: number, parcelId: number, reason: string): Promise<void> {
    return this.transition(mailboxId, parcelId, 'failed', { last_error: reason }, { reason });
  }

  /**
   * A failed attempt (download broke, content did not verify): back to `listed` to be retried,
   * or `failed` once `maxAttempts` is reached. Returns the new state.
   */
  recordAttemptFailure(mailboxId: number, parcelId: number, reason: string, maxAttempts: number): Promise<InboundState> {
    return this.journal.commit(async (tx) => {
      const row = await this.require(tx, mailboxId, parcelId);
      const attempts = row.attempts + 1;
      const to: InboundState = attempts >= maxAttempts ? 'failed' : 'listed';
      await this.apply(tx, row, to, { attempts, last_error: reason, staging_path: null }, { reason, attempts });
      return to;
    });
  }

  /**
   * A note on a row that stays in its state (a confirm to retry, a full disk). Best effort: it
   * never rejects (a note refused for a lost lease or a broken database changes nothing the
   * pipelines decide on), so callers need not wait for it; it is written in commit order.
   */
  noteError(mailboxId: number, parcelId: number, reason: string): Promise<void> {
    return this.journal
      .commit(async (tx) => {
        await tx.write(
          mailboxId,
          'UPDATE inbound_parcels SET last_error = ?, updated_at = ? WHERE mailbox_id = ? AND parcel_id = ?',
          scrubHeld(reason),
          this.journal.now(),
          mailboxId,
          parcelId,
        );
      })
      .catch(() => undefined);
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

  /** listed → taken: a complete pending list no longer shows the parcel, whose download has not begun (src/inbound/taken-elsewhere.ts). */
  markTaken(mailboxId: number, parcelId: number, reason: string): Promise<void> {
    return this.transition(mailboxId, parcelId, 'taken', { last_error: reason, staging_path: null }, { reason });
  }

  /** taken → listed: the parcel is pending again (reset on the service, or offered again): delivered like any listed parcel. */
  markPendingAgain(mailboxId: number, parcelId: number): Promise<void> {
    return this.transition(mailboxId, parcelId, 'listed', { last_error: null }, { pendingAgain: true }, ['taken']);
  }

  /** A confirmed parcel is InBoxReady again on the service: deliver it once more. */
  markRedelivery(mailboxId: number, parcelId: number): Promise<number> {
    return this.journal.commit(async (tx) => {
      const row = await this.require(tx, mailboxId, parcelId);
      const delivery = row.delivery + 1;
      await this.apply(
        tx,
        row,
        'listed',
        { delivery, attempts: 0, last_error: null, final_path: null, staging_path: null, bytes: null, sha256: null, confirm_unverified: 0 },
        { redelivery: delivery },
      );
      return delivery;
    });
  }

  /** Counts per state and the most recent failures, for `gridsync status` and metrics. */
  async summary(limit = 10): Promise<{ counts: Record<string, number>; recentFailures: InboundRow[] }> {
    const rows = await this.journal.all<{ state: string; n: number }>('SELECT state, count(*) AS n FROM inbound_parcels GROUP BY state');
    const counts = Object.fromEntries(rows.map((r) => [r.state, r.n]));
    const recentFailures = await this.journal.all<InboundRow>(
      "SELECT * FROM inbound_parcels WHERE state = 'failed' ORDER BY updated_at DESC LIMIT ?",
      limit,
    );
    return { counts, recentFailures };
  }

  /** Retention: forget finished rows (confirmed, taken) older than `olderThanMs`; a taken parcel listed again is new work either way. */
  pruneConfirmed(olderThanMs: number): Promise<number> {
    return pruneRows(this.journal, 'inbound_parcels', FINISHED_BEFORE, this.journal.now() - olderThanMs);
  }

  private async require(tx: JournalTx, mailboxId: number, parcelId: number): Promise<InboundRow> {
    const row = await tx.get<InboundRow>(SELECT_ROW, mailboxId, parcelId);
    if (!row) throw new IllegalTransitionError(mailboxId, parcelId, undefined, '(any)');
    return row;
  }

  /**
   * The row is read and the update sent together, without waiting for the read: the update only
   * matches a row in a state the transition may come from (`from`: the table's, or fewer), so the
   * read's answer (the state before, for the event and the error) need not be known first. On
   * PostgreSQL that saves a round trip per transition.
   */
  private transition(
    mailboxId: number,
    parcelId: number,
    to: InboundState,
    set: Record<string, unknown>,
    detail: Record<string, unknown> | null,
    from: readonly InboundState[] = INBOUND_TRANSITIONS[to],
  ): Promise<void> {
    // Parcels in flight together may share transactions (see InboundJournalOptions).
    const linger = this.options.mayLinger?.() ?? false;
    return this.journal.commit(
      async (tx) => {
        const read = tx.get<Pick<InboundRow, 'state'>>(SELECT_STATE, mailboxId, parcelId);
        const written = this.update(tx, mailboxId, parcelId, to, set, from);
        const [row, { changes }] = await Promise.all([read, written]);
        if (changes === 0 || !row) throw new IllegalTransitionError(mailboxId, parcelId, row?.state, to);
        await tx.recordEvent({ direction: 'in', mailboxId, item: parcelId, from: row.state, to, detail });
      },
      { ...INDEPENDENT, linger },
    );
  }

  private async apply(
    tx: JournalTx,
    row: InboundRow,
    to: InboundState,
    set: Record<string, unknown>,
    detail: Record<string, unknown> | null,
  ): Promise<void> {
    if (!canTransition(row.state, to)) throw new IllegalTransitionError(row.mailbox_id, row.parcel_id, row.state, to);
    await this.update(tx, row.mailbox_id, row.parcel_id, to, set, [row.state]);
    await tx.recordEvent({ direction: 'in', mailboxId: row.mailbox_id, item: row.parcel_id, from: row.state, to, detail });
  }

  /** The row moves to `to` if it is in one of the states `from`; `changes` is 0 otherwise. */
  private update(
    tx: JournalTx,
    mailboxId: number,
    parcelId: number,
    to: InboundState,
    set: Record<string, unknown>,
    from: readonly InboundState[],
  ): Promise<{ changes: number }> {
    const { sql: assign, values } = setClause(set);
    let states = '?';
    for (let i = 1; i < from.length; i++) states += ', ?';
    return tx.write(
      mailboxId,
      `UPDATE inbound_parcels SET state = ?, updated_at = ?${assign} WHERE mailbox_id = ? AND parcel_id = ? AND state IN (${states})`,
      to,
      this.journal.now(),
      ...values,
      mailboxId,
      parcelId,
      ...from,
    );
  }
}
