/**
 * Leases and fencing tokens on a real PostgreSQL server: two journals (two instances) share one
 * database. What must hold: a takeover bumps the token, also after the lease rows were deleted
 * (above every token the mailbox had); a write under the stale token changes nothing and fails
 * with JOURNAL_LEASE_LOST; a holder frozen inside a transaction cannot block a takeover for longer
 * than the server's idle-in-transaction timeout; a killed connection is replaced (or the write
 * fails typed); the password never reaches an error.
 */
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import {
  InboundJournal,
  OutboundJournal,
  JournalLeaseLostError,
  JournalUnavailableError,
  PG_TIMEOUTS,
  PgJournal,
  type JournalStore,
  type Lease,
} from '../../../src/journal/index.js';
import { eventually } from '../../helpers/daemon-child.js';
import { postgresForFile } from '../../helpers/postgres.js';

const MB = 1001;
const server = postgresForFile('leases and fencing tokens of a shared journal is not tested');
let databases = 0;
const opened: JournalStore[] = [];

afterEach(async () => {
  for (const j of opened.splice(0)) await j.close().catch(() => undefined);
});

async function twoInstances(): Promise<{ url: string; a: PgJournal; b: PgJournal }> {
  const url = await server.createDatabase(`lease_${++databases}`);
  const a = await PgJournal.open(url, 'test', { owner: 'host-a' });
  const b = await PgJournal.open(url, 'test', { owner: 'host-b' });
  opened.push(a, b);
  return { url, a, b };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Acquire until it succeeds (the lease must expire first), within `withinMs`. */
async function takeOver(j: JournalStore, withinMs: number) {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const lease = await j.leases.acquire(MB, 60_000).catch((err: unknown) => {
      expect(err).toBeInstanceOf(JournalUnavailableError); // a lock timeout, typed
      return undefined;
    });
    if (lease) return lease;
    if (Date.now() > deadline) throw new Error(`no takeover within ${withinMs} ms`);
    await sleep(50);
  }
}

describe.skipIf(!server.available)('journal leases (PostgreSQL)', () => {
  it('a takeover bumps the token; the old holder cannot renew, and its write changes nothing and fails typed', async () => {
    const { a, b } = await twoInstances();
    const lostA: number[] = [];
    a.leases.onLost((m) => lostA.push(m));
    const la = await a.leases.acquire(MB, 300);
    expect(la).toMatchObject({ mailboxId: MB, owner: 'host-a' });
    expect(await b.leases.acquire(MB, 60_000)).toBeUndefined(); // held and live
    const inA = new InboundJournal(a);
    await inA.recordListed(MB, { parcelId: 1 });
    const lb = await takeOver(b, 10_000);
    expect(lb.token).toBeGreaterThan(la?.token ?? Infinity);
    expect(await a.leases.renew(la as NonNullable<typeof la>, 10_000)).toBeUndefined();

    const refused = await inA
      .markStaged(MB, 1, { stagingPath: '/s', bytes: 1, sha256: 'x', finalPath: '/i', fileName: null })
      .catch((e) => e);
    expect(refused).toBeInstanceOf(JournalLeaseLostError);
    expect((refused as JournalLeaseLostError).code).toBe('JOURNAL_LEASE_LOST');
    expect(lostA).toEqual([MB]);
    const row = await new InboundJournal(b).get(MB, 1);
    expect(row?.state).toBe('listed');
    expect(await b.all("SELECT to_state FROM events WHERE item = '1'")).toEqual([{ to_state: 'listed' }]);
    // The new holder writes.
    await new InboundJournal(b).markStaged(MB, 1, { stagingPath: '/s', bytes: 1, sha256: 'x', finalPath: '/i', fileName: null });
    // …and the tokens seen only grow.
    const rows = await b.leases.list();
    expect(rows).toEqual([expect.objectContaining({ mailboxId: MB, owner: 'host-b', token: lb.token, live: true })]);
  });

  it('a write without any lease is refused; a renewal by the holder keeps its token', async () => {
    const { a } = await twoInstances();
    await expect(new InboundJournal(a).recordListed(MB, { parcelId: 2 })).rejects.toMatchObject({ code: 'JOURNAL_LEASE_LOST' });
    const la = await a.leases.acquire(MB, 5_000);
    const renewed = await a.leases.renew(la as NonNullable<typeof la>, 5_000);
    expect(renewed?.token).toBe(la?.token);
    expect(await a.leases.acquire(MB, 5_000)).toMatchObject({ token: la?.token });
    expect(await new InboundJournal(a).recordListed(MB, { parcelId: 2 })).toBe(true);
  });

  it("an operator's step (requeue) writes beside the holder without a lease — only itself, and only a row still in the state it read", async () => {
    const { url, a, b } = await twoInstances();
    await a.leases.acquire(MB, 60_000);
    const held = new OutboundJournal(a);
    const inError = async (name: string): Promise<number> => {
      const row = await held.markClaiming(MB, '/out', name, `/out/${name}`, '/proc');
      await held.markErroring(row.id, { reason: 'refused' });
      await held.markInError(row.id, `/err/${name}`);
      return row.id;
    };
    const [first, second] = [await inError('a.x12'), await inError('b.x12')];
    const claiming = (await held.markClaiming(MB, '/out', 'c.x12', '/out/c.x12', '/proc')).id;
    const operator = new OutboundJournal(b); // holds no lease

    // One batch: the operator's step lands; an ordinary write beside it is still fenced.
    const [requeued, claimed] = await Promise.allSettled([
      operator.markRequeued(first),
      operator.markClaimed(claiming, 1, 'ab'.repeat(32)),
    ]);
    expect(requeued.status).toBe('fulfilled');
    expect(claimed).toMatchObject({ status: 'rejected', reason: { code: 'JOURNAL_LEASE_LOST' } });
    expect((await held.get(claiming))?.state).toBe('claiming');

    // The row moves after the step read it, before its update runs: the update matches nothing.
    const other = new pg.Client({ connectionString: url });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query("UPDATE outbound_files SET state = 'requeued' WHERE id = $1", [second]);
      const late = operator.markRequeued(second).catch((e: unknown) => e);
      await eventually(async () => (await server.admin("SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock'")).length > 0);
      await other.query('COMMIT');
      expect(await late).toMatchObject({ code: 'JOURNAL_ILLEGAL_TRANSITION', from: 'requeued', to: 'requeued' });
    } finally {
      await other.end();
    }
    expect(await a.all("SELECT item FROM events WHERE to_state = 'requeued' ORDER BY id")).toEqual([{ item: String(first) }]);
  });

  it('a release hands the lease over at once, with a new token; a restarted instance of the same name never inherits its token', async () => {
    const { url, a, b } = await twoInstances();
    const la = await a.leases.acquire(MB, 60_000);
    await a.leases.release(la as NonNullable<typeof la>);
    const lb = await b.leases.acquire(MB, 60_000);
    expect(lb?.token).toBeGreaterThan(la?.token ?? Infinity);
    await b.close(); // a planned stop hands its leases back
    const b2 = await PgJournal.open(url, 'test', { owner: 'host-b' });
    opened.push(b2);
    const again = await b2.leases.acquire(MB, 60_000);
    expect(again?.token).toBeGreaterThan(lb?.token ?? Infinity);
  });

  /**
   * A holds the mailbox and has written; `wipe` runs (a DBA, a restore) while A, frozen, keeps its
   * token; the same host's gridsync is started again meanwhile and takes the mailbox. Its token is
   * above A's, and A's write under its old token is refused: nothing written.
   */
  async function takenAgainAfter(wipe: string): Promise<{ a2: PgJournal; again: Lease | undefined }> {
    const { url, a } = await twoInstances();
    const la = await a.leases.acquire(MB, 60_000);
    await new InboundJournal(a).recordListed(MB, { parcelId: 1 });
    await a.maintain(wipe);
    const a2 = await PgJournal.open(url, 'test', { owner: 'host-a' });
    opened.push(a2);
    const again = await a2.leases.acquire(MB, 60_000);
    expect.soft(again?.token).toBeGreaterThan(la?.token ?? Infinity);
    await expect(new InboundJournal(a).recordListed(MB, { parcelId: 2 })).rejects.toBeInstanceOf(JournalLeaseLostError);
    expect(await a2.all('SELECT parcel_id FROM inbound_parcels ORDER BY parcel_id')).toEqual([{ parcel_id: 1 }]);
    return { a2, again };
  }

  it('lease rows deleted under a holder: the next token is above every one the mailbox had, so a frozen same-named holder stays fenced', async () => {
    const { a2, again } = await takenAgainAfter('TRUNCATE lease');
    // And again after a second TRUNCATE: the highest token is kept apart from the rows.
    await a2.maintain('DELETE FROM lease');
    expect((await a2.leases.acquire(MB, 60_000))?.token).toBeGreaterThan(again?.token ?? Infinity);
  });

  it('lease and meta emptied together (a DBA, an older backup restored): the next token is still above the one a frozen same-named holder has', async () => {
    // Every trace of the tokens issued goes, the highest kept in meta too.
    await takenAgainAfter('TRUNCATE lease, meta');
  });

  it("tokens issued while the server's clock ran ahead (set back since): the next is above them, kept in meta", async () => {
    const { a2 } = await takenAgainAfter('TRUNCATE lease');
    // A token from a clock a day ahead of the server's now, as the highest the mailbox had.
    const ahead = (Date.now() + 86_400_000) * 1000;
    expect(await a2.maintain('UPDATE meta SET value = ? WHERE key = ?', String(ahead), `lease-token:${MB}`)).toBe(1);
    await a2.maintain('DELETE FROM lease');
    expect((await a2.leases.acquire(MB, 60_000))?.token).toBeGreaterThan(ahead);
  });

  it('a holder frozen inside its transaction does not block a takeover beyond the idle-in-transaction timeout, and its write never lands', async () => {
    const { a, b } = await twoInstances();
    await a.leases.acquire(MB, 200);
    let unfreeze: () => void = () => undefined;
    const frozen = new Promise<void>((r) => (unfreeze = r));
    // A's write takes the fence (the lease row FOR SHARE), then its process "stops" mid-transaction.
    const write = a.commit(async (tx) => {
      await tx.write(MB, 'INSERT INTO meta (key, value) VALUES (?, ?)', 'frozen', 'a');
      await frozen;
      await tx.write(MB, 'INSERT INTO meta (key, value) VALUES (?, ?)', 'after', 'a');
    });
    await sleep(300); // A's lease has expired; its transaction still holds the row
    const started = Date.now();
    await takeOver(b, PG_TIMEOUTS.idleInTxMs + PG_TIMEOUTS.lockMs + 5_000);
    const waited = Date.now() - started;
    expect(waited).toBeLessThan(PG_TIMEOUTS.idleInTxMs + PG_TIMEOUTS.lockMs + 5_000);
    unfreeze();
    const outcome = await write.catch((e: unknown) => e);
    expect(outcome).toBeInstanceOf(JournalUnavailableError);
    expect(await b.getMeta('frozen')).toBeUndefined();
    expect(await b.getMeta('after')).toBeUndefined();
  });

  it('pg_terminate_backend of the journal’s connections: the next writes reconnect (a failure is typed), nothing is half-written', async () => {
    const { a } = await twoInstances();
    await a.leases.acquire(MB, 60_000);
    const j = new InboundJournal(a);
    await j.recordListed(MB, { parcelId: 1 });
    const killed = await server.admin<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE application_name = 'gridsync' AND pid <> pg_backend_pid()",
    );
    await server.admin(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'gridsync' AND pid <> pg_backend_pid()",
    );
    expect(killed.length).toBeGreaterThan(0);
    let listed: boolean | undefined;
    for (let i = 0; i < 5 && listed === undefined; i++) {
      listed = await j.recordListed(MB, { parcelId: 2 }).catch((err: unknown) => {
        expect(err).toBeInstanceOf(JournalUnavailableError);
        return undefined;
      });
    }
    expect(listed).toBe(true);
    expect((await j.inStates(MB, ['listed'])).map((r) => r.parcel_id)).toEqual([1, 2]);
  });

  it('connections start with keepalive-safe server limits (statement, lock and idle-in-transaction timeouts)', async () => {
    const { a } = await twoInstances();
    const show = async (name: string) => Object.values((await a.get<Record<string, string>>(`SHOW ${name}`)) ?? {})[0];
    expect(await show('statement_timeout')).toBe(`${PG_TIMEOUTS.statementMs / 1000}s`);
    expect(await show('lock_timeout')).toBe(`${PG_TIMEOUTS.lockMs / 1000}s`);
    expect(await show('idle_in_transaction_session_timeout')).toBe(`${PG_TIMEOUTS.idleInTxMs / 1000}s`);
  });

  it('the password in the URL never reaches an error text or the shown location', async () => {
    const secret = 'Sup3r-s3cret-pw';
    // A refused connection, and a database that does not exist (the server names it in its answer).
    for (const url of [
      `postgres://gridsync:${secret}@127.0.0.1:1/db`,
      `${server.url.replace('postgres@', `postgres:${secret}@`)}_${secret}`,
    ]) {
      const err = await PgJournal.open(url, 'shown', { owner: 'x' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(JournalUnavailableError);
      expect(String((err as Error).message)).not.toContain(secret);
      expect(JSON.stringify(err)).not.toContain(secret);
    }
  });
});
