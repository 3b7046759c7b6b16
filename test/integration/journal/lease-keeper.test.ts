/**
 * The lease keeper against a real PostgreSQL: two instances, the same mailboxes. They split them
 * fairly (the first hands one back when the second appears) and keep them while they renew; a
 * planned stop hands them over at once; a holder that stopped renewing
 * (a frozen process) learns on waking that it lost them, and may act on none; a holder whose
 * renewals come too late stops acting at its self-fencing deadline even before anyone takes over;
 * one whose machine slept past its lease starts nothing when it wakes.
 */
import { describe, expect, it } from 'vitest';
import { LeaseKeeper, type LeaseLossReason } from '../../../src/daemon/lease-keeper.js';
import { PgJournal } from '../../../src/journal/index.js';
import { postgresForFile } from '../../helpers/postgres.js';
import { eventually } from '../../helpers/daemon-child.js';

const server = postgresForFile('the lease keeper is not tested');

const MAILBOXES = [1001, 1002];

describe.skipIf(!server.available)('lease keeper (PostgreSQL)', () => {
  it('holds, hands over on stop, and a woken stale holder learns its loss and acts on nothing', async () => {
    const url = await server.createDatabase('keeper_a');
    const a = await PgJournal.open(url, 'test', { owner: 'host-a' });
    const b = await PgJournal.open(url, 'test', { owner: 'host-b' });
    const lost: [string, number, LeaseLossReason][] = [];
    const keeper = (j: PgJournal, name: string) =>
      new LeaseKeeper({
        leases: j.leases,
        mailboxIds: MAILBOXES,
        ttlMs: 800,
        renewMs: 150,
        marginMs: 100,
        onLost: (m, why) => lost.push([name, m, why]),
      });
    const ka = keeper(a, 'a');
    const kb = keeper(b, 'b');
    try {
      await ka.start();
      expect(MAILBOXES.every((m) => ka.mayAct(m))).toBe(true); // alone: all of them
      await kb.start();
      // Fair share: a hands one back, b takes it; nobody acts on a mailbox the other holds.
      await eventually(() => MAILBOXES.filter((m) => kb.mayAct(m)).length === 1, 5_000, 'b gets its fair share');
      await new Promise((r) => setTimeout(r, 1_200)); // longer than a lease: the split holds
      expect(MAILBOXES.filter((m) => ka.mayAct(m)).length).toBe(1);
      expect(MAILBOXES.some((m) => ka.mayAct(m) && kb.mayAct(m))).toBe(false);
      expect(lost).toEqual([['a', Math.max(...MAILBOXES), 'handed-back']]);
      lost.length = 0;
      const tokens = [...ka.heldLeases(), ...kb.heldLeases()].sort((x, y) => x.mailboxId - y.mailboxId).map((l) => l.token);
      const fromA = ka.heldLeases().map((l) => l.mailboxId);

      await ka.stop(); // planned: handed back at once
      await eventually(() => MAILBOXES.every((m) => kb.mayAct(m)), 5_000, 'b takes over after a release');
      // The one b took from a has a grown token; the one it held keeps its own.
      const after = kb
        .heldLeases()
        .sort((x, y) => x.mailboxId - y.mailboxId)
        .map((l) => l.token);
      for (const [i, m] of MAILBOXES.entries())
        if (fromA.includes(m)) expect(after[i]).toBeGreaterThan(tokens[i] as number);
        else expect(after[i]).toBe(tokens[i]);

      // b freezes (no renewals); a new a takes over after the expiry; b wakes.
      const frozen = kb as unknown as { timer: NodeJS.Timeout };
      clearInterval(frozen.timer);
      const ka2 = keeper(a, 'a2');
      await ka2.start();
      await eventually(async () => (await ka2.tick(), MAILBOXES.every((m) => ka2.mayAct(m))), 5_000, 'a takes over from a frozen b');
      expect(MAILBOXES.some((m) => kb.mayAct(m))).toBe(false); // its deadline passed while frozen
      await kb.tick();
      expect(
        lost
          .filter(([who]) => who === 'b')
          .map(([, m]) => m)
          .sort(),
      ).toEqual(MAILBOXES);
      await ka2.stop();
    } finally {
      await kb.stop();
      await a.close();
      await b.close();
    }
  });

  it('self-fencing: renewals answered too late stop the holder at its deadline (monotonic clock), before any takeover', async () => {
    const url = await server.createDatabase('keeper_b');
    const a = await PgJournal.open(url, 'test', { owner: 'host-a' });
    let t = 0;
    const lost: LeaseLossReason[] = [];
    const k = new LeaseKeeper({
      leases: a.leases,
      mailboxIds: [1001],
      ttlMs: 10_000,
      renewMs: 3_000,
      marginMs: 1_000,
      now: () => t,
      onLost: (_m, why) => lost.push(why),
    });
    try {
      await k.start();
      const first = k.heldLeases()[0]?.token ?? Infinity;
      expect(k.mayAct(1001)).toBe(true);
      t = 8_999;
      expect(k.mayAct(1001)).toBe(true);
      t = 9_000; // sent at 0 + lease 10 s − margin 1 s
      expect(k.mayAct(1001)).toBe(false);
      const slow = a.leases.renew.bind(a.leases);
      a.leases.renew = async (lease, ttl) => {
        const r = await slow(lease, ttl);
        t += 20_000; // the answer arrives after the whole lease
        return r;
      };
      let acquired = 0;
      (k as unknown as { options: { onAcquired: () => void } }).options.onAcquired = () => acquired++;
      await k.tick();
      expect(lost).toEqual(['renewal-late']);
      // Handed back, then taken again in the same round under a new token (the abandoned holding's
      // work never passes for the new one's), with a deadline counted from this new request.
      expect(acquired).toBe(1);
      expect(k.heldLeases()[0]?.token).toBeGreaterThan(first);
    } finally {
      await k.stop();
      await a.close();
    }
  });

  it('a holder whose machine slept past its lease starts nothing when it wakes (the monotonic clock stood still, the wall clock moved on)', async () => {
    const url = await server.createDatabase('keeper_sleep');
    const a = await PgJournal.open(url, 'test', { owner: 'host-a' });
    // Linux's monotonic clock does not count a suspend; the wall clock is set forward on waking.
    let wall = Date.now();
    const k = new LeaseKeeper({
      leases: a.leases,
      mailboxIds: [1001],
      ttlMs: 10_000,
      renewMs: 3_000,
      marginMs: 1_000,
      now: () => 0,
      wall: () => wall,
      onLost: () => undefined,
    });
    try {
      await k.start();
      expect(k.mayAct(1001)).toBe(true);
      wall += 8_999;
      expect(k.mayAct(1001)).toBe(true);
      wall += 60_000; // asleep for a minute: another instance may hold the mailbox by now
      expect(k.mayAct(1001)).toBe(false);
      expect(() => k.handle(1001).assertMayAct()).toThrow(/does not hold its lease now/);
    } finally {
      await k.stop();
      await a.close();
    }
  });

  it('a frozen database server: the holding ends at its self-fencing deadline by the keeper clock, however early its timer ran', async () => {
    const url = await server.createDatabase('keeper_frozen');
    const a = await PgJournal.open(url, 'test', { owner: 'host-a' });
    // Node runs a timer when its own loop time (whole milliseconds, read when the loop last woke)
    // says so, which is often a little before performance.now() reaches the time it was set for —
    // in the daemon, by as much as the work done in that turn of the loop before the renewal's
    // answer. Here the keeper's clock stands still while the timer runs: the extreme of that.
    let t = 0;
    const wallAtStart = Date.now();
    const lost: LeaseLossReason[] = [];
    const k = new LeaseKeeper({
      leases: a.leases,
      mailboxIds: [1001],
      ttlMs: 1_000,
      renewMs: 300,
      marginMs: 100,
      now: () => t,
      wall: () => wallAtStart + t,
      onLost: (_m, why) => lost.push(why),
    });
    try {
      await k.start();
      await new Promise((r) => setTimeout(r, 400)); // renewed at least once
      const signal = k.handle(1001).signal();
      server.freeze(true); // every renewal from now on hangs until the journal's query timeout (15 s)
      await new Promise((r) => setTimeout(r, 1_300)); // the self-fencing timer has run, its clock short of the deadline
      expect(lost).toEqual([]);
      t = 950; // now past the deadline (sent at 0 + lease 1 s − margin 0.1 s)
      expect(k.mayAct(1001)).toBe(false);
      await eventually(() => lost.length > 0, 4_000, 'the holding ended while the renewal hangs').catch(() => undefined);
      expect(lost, 'the holding ended only when the hung renewal failed').toEqual(['renewal-late']);
      expect(signal?.aborted).toBe(true);
    } finally {
      server.freeze(false);
      await k.stop();
      await a.close();
    }
  }, 60_000);
});
