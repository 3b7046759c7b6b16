/**
 * One contract for every journal backend: the same transitions, refusals, recovery reads, group
 * commit and housekeeping, run against the embedded SQLite journal and a real PostgreSQL server
 * (started by the test; skipped, through the require-tool helper, where PostgreSQL is not installed, a failure under
 * GRIDSYNC_REQUIRE_TOOLS=1).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { holdSecrets } from '../../../src/errors/index.js';
import {
  IllegalTransitionError,
  InboundJournal,
  Journal,
  OutboundJournal,
  PgJournal,
  PRUNE_BATCH,
  holdsRows,
  pruneFailedParcels,
  recordedService,
  recordService,
  REDELIVERY_REQUESTED,
  type InboundRow,
  type JournalStore,
} from '../../../src/journal/index.js';
import { postgresForFile } from '../../helpers/postgres.js';

const MB = 1001;
const OTHER_MB = 1002;
const server = postgresForFile('the journal contract on the PostgreSQL backend is not tested');

interface Backend {
  readonly name: 'sqlite' | 'postgres';
  /**
   * A fresh, empty journal (the mailboxes' leases held), how to reopen the same one, and how to open
   * it beside that one as an operator's command does: holding no lease (SQLite: no lock).
   */
  fresh(): Promise<{ journal: JournalStore; reopen: () => Promise<JournalStore>; operator: () => Promise<JournalStore> }>;
}

let databases = 0;
const opened: JournalStore[] = [];
const dirs: string[] = [];

function unheld(j: JournalStore): JournalStore {
  opened.push(j);
  return j;
}

async function holdLeases(j: JournalStore): Promise<JournalStore> {
  opened.push(j);
  for (const m of [MB, OTHER_MB]) expect(await j.leases.acquire(m, 60_000)).toBeDefined();
  return j;
}

const backends: Backend[] = [
  {
    name: 'sqlite',
    async fresh() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-contract-'));
      dirs.push(dir);
      const file = path.join(dir, 'journal.sqlite');
      return {
        journal: await holdLeases(Journal.open(file)),
        reopen: async () => holdLeases(Journal.open(file)),
        operator: async () => unheld(Journal.open(file, { lock: false })),
      };
    },
  },
  ...(server.available
    ? [
        {
          name: 'postgres' as const,
          async fresh() {
            const url = await server.createDatabase(`contract_${++databases}`);
            const open = async () => holdLeases(await PgJournal.open(url, 'test', { owner: 'contract' }));
            return {
              journal: await open(),
              reopen: open,
              operator: async () => unheld(await PgJournal.open(url, 'test', { owner: 'operator' })),
            };
          },
        },
      ]
    : []),
];

afterEach(async () => {
  for (const j of opened.splice(0)) await j.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const staged = (id: number) => ({
  stagingPath: `/staging/${id}.part`,
  bytes: 10,
  sha256: 'ab'.repeat(32),
  finalPath: `/inbox/p${id}.x12`,
  fileName: `p${id}.x12`,
});

describe.each(backends)('journal contract: $name', (backend) => {
  it('inbound: listed → staged → placed → confirmed, each step on the trail; a second listing is a no-op', async () => {
    const { journal } = await backend.fresh();
    const j = new InboundJournal(journal);
    expect(await j.recordListed(MB, { parcelId: 7, fileName: 'p7.x12', bytes: 10, gridIdFrom: 5002, gridIdTo: 5001 })).toBe(true);
    expect(await j.recordListed(MB, { parcelId: 7, fileName: 'p7.x12' })).toBe(false);
    await j.markStaged(MB, 7, staged(7));
    expect(await j.reservedPaths()).toEqual(new Set(['/inbox/p7.x12']));
    await j.markPlaced(MB, 7);
    await j.markConfirmed(MB, 7, 'confirmed');
    const row = await j.get(MB, 7);
    expect(row).toMatchObject({ state: 'confirmed', bytes: 10, grid_id_from: 5002, final_path: '/inbox/p7.x12', delivery: 1 });
    expect(typeof row?.first_seen_at).toBe('number');
    const trail = await journal.all<{ to_state: string }>("SELECT to_state FROM events WHERE direction = 'in' AND item = '7' ORDER BY id");
    expect(trail.map((e) => e.to_state)).toEqual(['listed', 'staged', 'placed', 'confirmed']);
    expect(await j.reservedPaths()).toEqual(new Set());
  });

  it('the secrets in effect never reach it: not in last_error, event details nor meta values', async () => {
    const secret = `sk-contract-${backend.name}-9f3e1`;
    holdSecrets([secret]);
    const { journal } = await backend.fresh();
    const j = new InboundJournal(journal);
    await j.recordListed(MB, { parcelId: 3 });
    await j.recordAttemptFailure(MB, 3, `the service said: bad key ${secret}`, 5);
    await j.noteError(MB, 3, `noted: ${secret}`);
    await journal.setMeta('lastCycle', JSON.stringify({ error: secret }));
    const stored = JSON.stringify([
      await journal.all('SELECT * FROM inbound_parcels'),
      await journal.all('SELECT * FROM events'),
      await journal.all('SELECT * FROM meta'),
    ]);
    expect(stored).toContain('noted: ');
    expect(stored).toContain('bad key');
    expect(stored).not.toContain(secret);
  });

  it('inbound: an illegal transition is refused, changes nothing, and does not disturb the commits it shares a transaction with', async () => {
    const { journal } = await backend.fresh();
    const j = new InboundJournal(journal);
    await j.recordListed(MB, { parcelId: 1 });
    await j.recordListed(MB, { parcelId: 2 });
    const [a, b, c] = await Promise.allSettled([j.markStaged(MB, 1, staged(1)), j.markConfirmed(MB, 2, 'confirmed'), j.markPlaced(MB, 99)]);
    expect(a.status).toBe('fulfilled');
    expect(b.status === 'rejected' && b.reason).toBeInstanceOf(IllegalTransitionError);
    expect(c.status === 'rejected' && (c.reason as IllegalTransitionError).code).toBe('JOURNAL_ILLEGAL_TRANSITION');
    expect((await j.get(MB, 1))?.state).toBe('staged');
    expect((await j.get(MB, 2))?.state).toBe('listed');
    expect(await j.get(MB, 99)).toBeUndefined();
  });

  it('inbound: failed attempts go back to listed, then to failed at maxAttempts; a redelivery lists a confirmed parcel again', async () => {
    const { journal } = await backend.fresh();
    const j = new InboundJournal(journal);
    await j.recordListed(MB, { parcelId: 3 });
    expect(await j.recordAttemptFailure(MB, 3, 'truncated', 2)).toBe('listed');
    expect(await j.recordAttemptFailure(MB, 3, 'truncated again', 2)).toBe('failed');
    expect(await j.get(MB, 3)).toMatchObject({ state: 'failed', attempts: 2, last_error: 'truncated again' });
    await j.recordListed(MB, { parcelId: 4 });
    await j.markStaged(MB, 4, staged(4));
    await j.markPlaced(MB, 4);
    await j.markConfirmed(MB, 4, 'already-confirmed');
    expect(await j.markRedelivery(MB, 4)).toBe(2);
    expect(await j.get(MB, 4)).toMatchObject({ state: 'listed', delivery: 2, final_path: null, attempts: 0 });
    await j.noteError(MB, 4, 'disk full');
    expect((await j.get(MB, 4))?.last_error).toBe('disk full');
    expect((await j.summary()).counts).toEqual({ failed: 1, listed: 1 });
  });

  it('inbound: a confirm not yet seen to take is remembered across a reopen, until seen, redelivered or reset by an operator', async () => {
    const { journal, reopen } = await backend.fresh();
    const j = new InboundJournal(journal);
    for (const id of [5, 6, 7, 8]) {
      await j.recordListed(MB, { parcelId: id });
      await j.markStaged(MB, id, staged(id));
      await j.markPlaced(MB, id);
    }
    await j.markConfirmed(MB, 5, 'confirmed');
    await j.markConfirmed(MB, 6, 'confirmed');
    await j.markConfirmed(MB, 7, 'already-confirmed');
    await j.markConfirmed(MB, 8, 'confirmed');
    await j.recordListed(OTHER_MB, { parcelId: 5 });
    await journal.close();
    const again = new InboundJournal(await reopen());
    expect((await again.unverifiedConfirms(MB)).sort()).toEqual([5, 6, 8]);
    expect(await again.unverifiedConfirms(OTHER_MB)).toEqual([]);
    expect((await again.get(MB, 5))?.confirm_unverified).toBe(1);
    await again.markConfirmsSeen(MB, [5]);
    expect(await again.markRedelivery(MB, 6)).toBe(2);
    await again.markResetRequested(8);
    expect(await again.unverifiedConfirms(MB)).toEqual([]);
    expect((await again.get(MB, 6))?.confirm_unverified).toBe(0);
  });

  it('recovery reads: rows left mid-way (a crash at any point) come back per mailbox, oldest first, and survive a reopen', async () => {
    let t = 1_000;
    const { journal, reopen } = await backend.fresh();
    const j = new InboundJournal(journal);
    for (const id of [30, 10, 20]) {
      t += 1;
      await journal.commit(async (tx) => {
        await tx.write(
          MB,
          "INSERT INTO inbound_parcels (mailbox_id, parcel_id, state, first_seen_at, updated_at) VALUES (?, ?, 'listed', ?, ?)",
          MB,
          id,
          t,
          t,
        );
      });
    }
    await j.recordListed(OTHER_MB, { parcelId: 40 });
    await j.markStaged(MB, 10, staged(10)); // crash after in.staged
    await j.markStaged(MB, 20, staged(20));
    await j.markPlaced(MB, 20); // crash after in.placed
    await journal.close();
    const again = new InboundJournal(await reopen());
    expect((await again.inStates(MB, ['downloading', 'staged', 'placed'])).map((r) => [r.parcel_id, r.state])).toEqual([
      [10, 'staged'],
      [20, 'placed'],
    ]);
    expect((await again.inStates(MB, ['listed'])).map((r) => r.parcel_id)).toEqual([30]);
    expect((await again.inStates(OTHER_MB, ['listed'])).map((r) => r.parcel_id)).toEqual([40]);
  });

  it('outbound: claiming → claimed → uploading ⇄ claimed → uploaded → archived; and the error path to requeued', async () => {
    const { journal } = await backend.fresh();
    const j = new OutboundJournal(journal);
    const row = await j.markClaiming(MB, '/out', 'a.x12', '/out/a.x12', '/proc');
    expect(row).toMatchObject({ state: 'claiming', mailbox_id: MB, file_name: 'a.x12' });
    expect(row.processing_path).toContain(String(row.id));
    await j.markClaimed(row.id, 5, 'cd'.repeat(32));
    await j.markUploading(row.id, 111, null);
    await j.markNotSent(row.id, 'connection refused');
    await j.markUploading(row.id, 222, 60_222);
    expect(await j.get(row.id)).toMatchObject({ state: 'uploading', attempts: 2, attempt_started_at: 222, attempt_service_at: 60_222 });
    expect(await j.isAdopted(9001)).toBe(false);
    await j.markUploaded(row.id, 9001, 'reconciled');
    expect(await j.isAdopted(9001)).toBe(true);
    await j.markArchived(row.id, '/sent/a.x12');
    expect((await j.get(row.id))?.state).toBe('archived');

    const second = await j.markClaiming(MB, '/out', 'b.x12', '/out/b.x12', '/proc');
    expect(second.id).toBeGreaterThan(row.id);
    await j.markClaimed(second.id, 5, 'cd'.repeat(32));
    expect((await j.duplicateOf(second.id, 'cd'.repeat(32), 0))?.id).toBe(row.id);
    await j.markErroring(second.id, { reason: 'duplicate', errorCode: 'DUP', httpStatus: null });
    await j.markInError(second.id, '/err/b.x12');
    expect((await j.inErrorAt('/err/b.x12')).map((r) => r.id)).toEqual([second.id]);
    await j.markRequeued(second.id);
    await expect(j.markArchived(second.id, null)).rejects.toMatchObject({ code: 'JOURNAL_ILLEGAL_TRANSITION' });
    expect((await j.inStates(MB, '/out', ['requeued', 'archived'])).map((r) => r.state)).toEqual(['archived', 'requeued']);
    expect((await j.summary()).counts).toEqual({ archived: 1, requeued: 1 });
  });

  it('operator steps (requeue, redeliver) from a journal holding no lease, beside the holder: final rows only, on the trail', async () => {
    const { journal, operator } = await backend.fresh();
    const out = new OutboundJournal(journal);
    const inbound = new InboundJournal(journal);
    const failed = await out.markClaiming(MB, '/out', 'a.x12', '/out/a.x12', '/proc');
    await out.markClaimed(failed.id, 5, 'ef'.repeat(32));
    await out.markErroring(failed.id, { reason: 'duplicate' });
    await out.markInError(failed.id, '/err/a.x12');
    const busy = await out.markClaiming(MB, '/out', 'b.x12', '/out/b.x12', '/proc');
    await inbound.recordListed(MB, { parcelId: 9 });
    await inbound.markStaged(MB, 9, staged(9));
    await inbound.markPlaced(MB, 9);
    await inbound.markConfirmed(MB, 9, 'confirmed');

    const op = await operator();
    await new OutboundJournal(op).markRequeued(failed.id, true);
    await expect(new OutboundJournal(op).markRequeued(busy.id)).rejects.toMatchObject({ code: 'JOURNAL_ILLEGAL_TRANSITION' });
    await new InboundJournal(op).markResetRequested(9);

    expect(await out.get(failed.id)).toMatchObject({ state: 'requeued', error_code: 'OUTBOUND_SEND_ANYWAY' });
    expect((await out.get(busy.id))?.state).toBe('claiming');
    expect(await inbound.unverifiedConfirms(MB)).toEqual([]);
    expect((await inbound.lastRedeliveryRequests([9])).get(9)).toBeGreaterThanOrEqual(
      ((await inbound.get(MB, 9)) as InboundRow).updated_at,
    );
    expect(
      await journal.all(
        "SELECT direction, mailbox_id, item, from_state, to_state, detail FROM events WHERE to_state IN ('requeued', ?) ORDER BY id",
        REDELIVERY_REQUESTED,
      ),
    ).toEqual([
      { direction: 'out', mailbox_id: MB, item: String(failed.id), from_state: 'in_error', to_state: 'requeued', detail: '{"force":true}' },
      {
        direction: 'in',
        mailbox_id: null,
        item: '9',
        from_state: null,
        to_state: REDELIVERY_REQUESTED,
        detail: '{"by":"gridsync redeliver"}',
      },
    ]);
  });

  it('group commit: a burst of concurrent commits all resolve, durable across a reopen', async () => {
    const { journal, reopen } = await backend.fresh();
    const j = new InboundJournal(journal, { mayLinger: () => true });
    const ids = Array.from({ length: 300 }, (_, k) => k + 1);
    expect(await Promise.all(ids.map((id) => j.recordListed(MB, { parcelId: id })))).toEqual(ids.map(() => true));
    await Promise.all(ids.map((id) => j.markStaged(MB, id, staged(id))));
    await journal.close();
    const again = await reopen();
    expect(await again.get('SELECT count(*) AS n FROM inbound_parcels WHERE state = ?', 'staged')).toEqual({ n: 300 });
  });

  it('an ordered commit sees every commit asked for before it, independent ones still in flight included', async () => {
    const { journal } = await backend.fresh();
    const j = new InboundJournal(journal, { mayLinger: () => true });
    const ids = Array.from({ length: 200 }, (_, k) => k + 1);
    await Promise.all(ids.map((id) => j.recordListed(MB, { parcelId: id })));
    const turn = () => new Promise((r) => setImmediate(r));
    // Two waves a turn apart: the second may start while the first is in flight.
    const staging = ids.slice(0, 100).map((id) => j.markStaged(MB, id, staged(id)));
    await turn();
    staging.push(...ids.slice(100).map((id) => j.markStaged(MB, id, staged(id))));
    await turn();
    const seen = await journal.commit(async (tx) =>
      tx.get<{ n: number }>("SELECT count(*) AS n FROM inbound_parcels WHERE state = 'staged'"),
    );
    await Promise.all(staging);
    expect(seen).toEqual({ n: 200 });
  });

  it('independent commits side by side: one that throws after writing rolls back alone, with its events; the others land, their trail in order', async () => {
    const { journal } = await backend.fresh();
    const j = new InboundJournal(journal);
    for (const id of [1, 2, 3]) await j.recordListed(MB, { parcelId: id });
    const touch = (id: number, fail: boolean) =>
      journal.commit(
        async (tx) => {
          await tx.write(MB, 'UPDATE inbound_parcels SET last_error = ? WHERE mailbox_id = ? AND parcel_id = ?', `touched ${id}`, MB, id);
          await tx.recordEvent({ direction: 'in', mailboxId: MB, item: id, from: 'listed', to: 'listed', detail: { touched: id } });
          if (fail) throw new IllegalTransitionError(MB, id, 'listed', 'listed');
          return id;
        },
        { independent: true },
      );
    const settled = await Promise.allSettled([touch(1, false), touch(2, true), touch(3, false)]);
    expect(settled.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((await j.get(MB, 1))?.last_error).toBe('touched 1');
    expect((await j.get(MB, 2))?.last_error).toBeNull();
    expect((await j.get(MB, 3))?.last_error).toBe('touched 3');
    const trail = await journal.all<{ item: string }>("SELECT item FROM events WHERE detail LIKE '%touched%' ORDER BY id");
    expect(trail.map((e) => e.item)).toEqual(['1', '3']);
  });

  it('independent commits that collide on one row (the same parcel listed twice at once) still give one row and one "new"', async () => {
    const { journal } = await backend.fresh();
    const j = new InboundJournal(journal);
    const again = await Promise.all([
      j.recordListed(MB, { parcelId: 7 }),
      j.recordListed(MB, { parcelId: 8 }),
      j.recordListed(MB, { parcelId: 7 }),
    ]);
    expect(again).toEqual([true, true, false]);
    expect(await journal.get('SELECT count(*) AS n FROM inbound_parcels WHERE parcel_id = ?', 7)).toEqual({ n: 1 });
    expect(await journal.get("SELECT count(*) AS n FROM events WHERE item = ? AND to_state = 'listed'", '7')).toEqual({ n: 1 });
  });

  it('inbound: many rows in one read, by parcel id, across read chunks; unknown ids and other mailboxes left out', async () => {
    const { journal } = await backend.fresh();
    const j = new InboundJournal(journal);
    const ids = Array.from({ length: 1_200 }, (_, k) => k + 1);
    await Promise.all(ids.map((id) => j.recordListed(MB, { parcelId: id })));
    await j.recordListed(OTHER_MB, { parcelId: 5_000 });
    const rows = await j.getMany(MB, [...ids, 5_000, 9_999]);
    expect([...rows.keys()].sort((a, b) => a - b)).toEqual(ids);
    expect(rows.get(600)).toEqual(await j.get(MB, 600));
  });

  it("inbound: many parcels' latest redelivery requests in one read, across read chunks; other events and parcels never asked for left out", async () => {
    let t = 1_000;
    const { journal } = await backend.fresh();
    Object.defineProperty(journal, 'now', { value: () => t });
    const j = new InboundJournal(journal);
    const asked = Array.from({ length: 700 }, (_, k) => k + 1);
    await Promise.all(asked.map((id) => j.markResetRequested(id)));
    t = 2_000;
    await j.markResetRequested(650);
    await j.recordListed(MB, { parcelId: 9_999 });
    const last = await j.lastRedeliveryRequests([...asked, 9_999]);
    expect(last.size).toBe(asked.length);
    expect(last.get(1)).toBe(1_000);
    expect(last.get(650)).toBe(2_000);
    expect(last.has(9_999)).toBe(false);
    expect(await j.lastRedeliveryRequests([])).toEqual(new Map());
  });

  it('housekeeping: retention prunes finished rows and old events; meta is kept; the schema version is the latest', async () => {
    let t = 1_000_000;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-contract-'));
    dirs.push(dir);
    const { journal } = await backend.fresh();
    const clocked = journal as unknown as { now: () => number };
    Object.defineProperty(clocked, 'now', { value: () => t });
    const j = new InboundJournal(journal);
    await j.recordListed(MB, { parcelId: 1 });
    await j.markStaged(MB, 1, staged(1));
    await j.markPlaced(MB, 1);
    await j.markConfirmed(MB, 1, 'confirmed');
    await j.recordListed(MB, { parcelId: 2 });
    t += 10_000;
    expect(await j.pruneConfirmed(5_000)).toBe(1);
    expect(await journal.pruneEvents(5_000)).toBe(5);
    expect((await j.inStates(MB, ['listed'])).map((r) => r.parcel_id)).toEqual([2]);
    await journal.setMeta('lastCycle', '1');
    await journal.setMeta('lastCycle', '2');
    expect(await journal.getMeta('lastCycle')).toBe('2');
    expect(await journal.getMeta('missing')).toBeUndefined();
    expect(await journal.schemaVersion()).toBe(3);
  });

  it('the service it belongs to: none when new, recorded and kept across a reopen; rows of either direction count', async () => {
    const { journal, reopen } = await backend.fresh();
    expect(await recordedService(journal)).toBeUndefined();
    expect(await holdsRows(journal)).toBe(false);
    await recordService(journal, 'https://grid.example');
    await recordService(journal, 'embedded');
    await new OutboundJournal(journal).markClaiming(MB, '/out', 'a.x12', '/out/a.x12', '/proc');
    await journal.close();
    const again = await reopen();
    expect(await recordedService(again)).toBe('embedded');
    expect(await holdsRows(again)).toBe(true);

    const other = (await backend.fresh()).journal;
    await new InboundJournal(other).recordListed(MB, { parcelId: 100_001 });
    expect(await holdsRows(other)).toBe(true);
  });

  it('retention deletes a backlog larger than one statement may take, in batches, and nothing younger', async () => {
    const { journal } = await backend.fresh();
    const now = journal.now();
    const backlog = 2 * PRUNE_BATCH + 7;
    // A year of events after journalDays was lowered: one DELETE of it all held SQLite's loop for
    // seconds and on PostgreSQL ran into the statement timeout every day, deleting nothing.
    const insert = (count: number, at: number): Promise<number> =>
      journal.maintain(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${count})
         INSERT INTO events (at, direction, item) SELECT ?, 'in', CAST(i AS TEXT) FROM n`,
        at,
      );
    await insert(backlog, now - 100 * 86_400_000);
    await insert(3, now);
    const j = new InboundJournal(journal);
    for (let id = 1; id <= 3; id++) await j.recordListed(MB, { parcelId: id });
    await journal.maintain("UPDATE inbound_parcels SET state = 'confirmed', updated_at = ? WHERE parcel_id < 3", now - 100 * 86_400_000);
    const statements: number[] = [];
    const maintain = journal.maintain.bind(journal);
    Object.defineProperty(journal, 'maintain', {
      value: async (sql: string, ...params: unknown[]) => {
        const changed = await maintain(sql, ...params);
        statements.push(changed);
        return changed;
      },
    });
    expect(await journal.pruneEvents(30 * 86_400_000)).toBe(backlog);
    expect(Math.max(...statements)).toBeLessThanOrEqual(PRUNE_BATCH);
    expect(statements.length).toBeGreaterThanOrEqual(3);
    expect(await journal.all('SELECT count(*) AS n FROM events')).toEqual([{ n: 3 + 3 }]);
    expect(await j.pruneConfirmed(30 * 86_400_000)).toBe(2);
    expect((await j.inStates(MB, ['listed'])).map((r) => r.parcel_id)).toEqual([3]);
  });

  it('retention of failed parcels: an old row goes only once a complete pending list no longer shows its parcel', async () => {
    const { journal } = await backend.fresh();
    const j = new InboundJournal(journal);
    const day = 86_400_000;
    // More old failed rows than one page of the judged prune takes; every third still pending.
    const old = Array.from({ length: 1_200 }, (_, k) => k + 1);
    await Promise.all([...old, 2_000, 3_000].map((id) => j.recordListed(MB, { parcelId: id })));
    await j.recordListed(OTHER_MB, { parcelId: 1 });
    await Promise.all([...old, 2_000].map((id) => j.markFailed(MB, id, 'content did not verify')));
    await j.markFailed(OTHER_MB, 1, 'content did not verify');
    await journal.maintain('UPDATE inbound_parcels SET updated_at = ? WHERE parcel_id <> 2000', journal.now() - 100 * day);
    const stillPending = new Set(old.filter((id) => id % 3 === 0));
    let asked = 0;
    const pendingNow = async (): Promise<ReadonlySet<number>> => {
      asked++;
      return stillPending;
    };

    // A list that cannot tell (cut short, a record without an id): every row stays.
    expect(await pruneFailedParcels(journal, MB, 30 * day, async () => undefined)).toBe(0);
    expect(await pruneFailedParcels(journal, MB, 30 * day, pendingNow)).toBe(800);
    expect(asked).toBe(1);
    const failed = (await j.inStates(MB, ['failed'])).map((r) => r.parcel_id).sort((a, b) => a - b);
    expect(failed).toEqual([...stillPending, 2_000]);
    expect((await j.get(MB, 3_000))?.state).toBe('listed');
    expect((await j.get(OTHER_MB, 1))?.state).toBe('failed');
    // A mailbox without an old failed row does not ask the service at all.
    expect(
      await pruneFailedParcels(journal, 4_242, 30 * day, async () => {
        throw new Error('the service was asked');
      }),
    ).toBe(0);
  });

  it('retention of in_error rows: an old row goes only once its file has left errorDir; one requeued meanwhile stays', async () => {
    const { journal } = await backend.fresh();
    const o = new OutboundJournal(journal);
    const day = 86_400_000;
    const inError = async (name: string, finalPath: string | null): Promise<number> => {
      const row = await o.markClaiming(MB, '/out', name, `/out/${name}`, '/proc');
      await o.markErroring(row.id, { reason: 'not an interchange', errorCode: 'OUTBOUND_INVALID_INTERCHANGE' });
      await o.markInError(row.id, finalPath);
      return row.id;
    };
    const gone = await inError('gone.x12', '/err/gone.x12');
    const kept = await inError('kept.x12', '/err/kept.x12');
    const vanished = await inError('vanished.x12', null);
    const racing = await inError('racing.x12', '/err/racing.x12');
    await journal.maintain('UPDATE outbound_files SET updated_at = ?', journal.now() - 100 * day);
    const recent = await inError('recent.x12', '/err/recent.x12');
    const judged: string[] = [];
    const pruned = await o.pruneInError(30 * day, async (finalPath) => {
      judged.push(String(finalPath));
      // `gridsync requeue` moves this one while it is judged: the delete checks the state again.
      if (finalPath === '/err/racing.x12') await o.markRequeued(racing);
      return finalPath !== '/err/kept.x12';
    });
    expect(pruned).toBe(2);
    expect(judged.sort()).toEqual(['/err/gone.x12', '/err/kept.x12', '/err/racing.x12', 'null']);
    expect(await o.get(gone)).toBeUndefined();
    expect(await o.get(vanished)).toBeUndefined();
    expect((await o.get(kept))?.state).toBe('in_error');
    expect((await o.get(racing))?.state).toBe('requeued');
    expect((await o.get(recent))?.state).toBe('in_error');
    expect((await o.inErrorAt('/err/kept.x12')).map((r) => r.id)).toEqual([kept]);
  });

  it('close() writes the commits still waiting, and is safe to call twice', async () => {
    const { journal, reopen } = await backend.fresh();
    const j = new InboundJournal(journal);
    const listed = j.recordListed(MB, { parcelId: 5 });
    await journal.close();
    await journal.close();
    expect(await listed).toBe(true);
    expect((await new InboundJournal(await reopen()).get(MB, 5))?.state).toBe('listed');
  });
});
