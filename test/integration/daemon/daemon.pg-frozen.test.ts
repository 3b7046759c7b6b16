/**
 * The journal's PostgreSQL server frozen under `gridsync run` (SIGSTOP to the postmaster and every
 * backend: the sockets stay open, nothing answers — a database host paused by its hypervisor, or
 * swapping): /readyz turns 503 naming the journal once the lease is gone and the lease round's
 * statements have timed out; SIGTERM stops the daemon within its shutdown deadline and a fixed
 * grace whatever hangs, not after the journal's query and connect timeouts of a renewal round;
 * woken, the server gets every parcel and file delivered exactly once, by the same daemon and by
 * the next one.
 */
import { describe, expect, it, type TestContext } from 'vitest';
import { eventually } from '../../helpers/daemon-child.js';
import { x12 } from '../../helpers/edi.js';
import { startHaWorld, type HaInstance } from '../../helpers/ha-world.js';
import { postgresAvailable, startPostgres, type PostgresServer } from '../../helpers/postgres.js';

const available = postgresAvailable('a frozen journal server is not tested');

/**
 * A server of the test's own, stopped when it ends: each test freezes its server for seconds, so
 * with one server per file they ran one after the other; with one each they run side by side.
 */
async function serverOf(ctx: TestContext): Promise<PostgresServer> {
  const server = await startPostgres();
  ctx.onTestFinished(() => server.stop());
  return server;
}

/**
 * Freezes the server, does `meanwhile`, lets 1.5 s pass (the daemon's steps hang on the journal),
 * sends SIGTERM and wakes the server once the daemon has exited (or 60 s on): the ms from signal to exit.
 */
async function sigtermWhileFrozen(server: PostgresServer, a: HaInstance, meanwhile: () => void | Promise<void>): Promise<number> {
  server.freeze(true);
  try {
    await meanwhile();
    await new Promise((r) => setTimeout(r, 1_500));
    const t = performance.now();
    a.signal('SIGTERM');
    await eventually(() => !a.running, 60_000, 'the daemon exited').catch(() => undefined);
    return performance.now() - t;
  } finally {
    server.freeze(false);
  }
}

describe.skipIf(!available).concurrent('PostgreSQL server frozen under a running daemon', () => {
  it('woken, it delivers what arrived meanwhile once, without a restart', async (ctx) => {
    const server = await serverOf(ctx);
    // The hung statements fail at the driver's query timeout: 15 s by default, 5 s here from the
    // URL (node-postgres reads `query_timeout` there, over the pool's option); the sequence —
    // holding lost, statements failed, 503, woken, delivered — is the same, 10 s sooner. The other
    // two tests keep 15 s: their stop bounds are measured against it.
    const url = `${await server.createDatabase('frozen_wake')}?query_timeout=5000`;
    const w = await startHaWorld({ journalUrl: url, instances: 1, leaseMs: 4_000, renewMs: 1_000 });
    try {
      const a = w.instances[0] as HaInstance;
      await a.startHolding();
      let control = 1;
      for (let i = 0; i < 4; i++) await w.inject(`in${i}.x12`, Buffer.from(x12(control++)));
      for (let i = 0; i < 3; i++) w.dropOutbox(`out${i}.x12`, Buffer.from(x12(control++)));
      server.freeze(true);
      try {
        await w.inject('frozen-in.x12', Buffer.from(x12(control++)));
        w.dropOutbox('frozen-out.x12', Buffer.from(x12(control++)));
        // Past the lease and the journal's query timeout (5 s here): the holding ends, the hung
        // statements fail, and /readyz says why (it said ready throughout before). A mailbox that
        // fails mid-cycle turns /readyz 503 at once (its `failing` entry) while `lastError` is set
        // when the cycle ends: the 503 looked for is the one that names the journal.
        const unready = await eventually(
          async () => {
            const r = await a.readyz();
            return r.status === 503 && /^journal .* unavailable/.test(r.lastError ?? '') && r;
          },
          30_000,
          '/readyz 503',
        ).catch(async () => a.readyz());
        expect(unready.status).toBe(503);
        expect(unready.lastError).toMatch(/^journal .* unavailable/);
        expect(a.running).toBe(true);
      } finally {
        server.freeze(false);
      }
      await w.settled(40_000, () => a.running);
      expect(a.lines().filter((l) => l.msg === 'gridsync started')).toHaveLength(1);
      await eventually(async () => (await a.readyz()).status === 200, 15_000, '/readyz 200 again');
    } finally {
      await w.close();
    }
  }, 120_000);

  it('SIGTERM stops the daemon within its shutdown deadline; the next one delivers everything once', async (ctx) => {
    const server = await serverOf(ctx);
    const url = await server.createDatabase('frozen_stop');
    const w = await startHaWorld({ journalUrl: url, instances: 1, leaseMs: 4_000, renewMs: 1_000 });
    try {
      const a = w.instances[0] as HaInstance;
      await a.startHolding();
      await w.inject('before.x12', Buffer.from(x12(1)));
      await w.settled(40_000, () => a.running);
      // A renewal round is under way and hangs on its first statement (the query timeout is 15 s).
      const stopMs = await sigtermWhileFrozen(server, a, () => w.dropOutbox('frozen-out.x12', Buffer.from(x12(2))));
      // shutdownTimeout is 3 s: the leases' hand-back and the transfers share it, the releases
      // after them a grace of 2 s; it took 16 s and more before.
      expect(stopMs, 'SIGTERM to exit (ms)').toBeLessThan(15_000);
      expect(a.proc?.exitCode).toBe(0);
      await w.inject('after.x12', Buffer.from(x12(3)));
      a.start();
      await w.settled(40_000, () => a.running);
    } finally {
      await w.close();
    }
  }, 120_000);

  it('the whole stop fits shutdownTimeout and a fixed grace, whatever hangs on the frozen server', async (ctx) => {
    const server = await serverOf(ctx);
    const url = await server.createDatabase('frozen_bound');
    // Long enough that the deadline once and the deadline twice are seconds apart, short enough that
    // what hangs on the frozen server (its query timeout is 15 s) hangs past twice the deadline.
    const shutdownMs = 6_000;
    const w = await startHaWorld({ journalUrl: url, instances: 1, leaseMs: 4_000, renewMs: 1_000, shutdownTimeoutMs: shutdownMs });
    try {
      const a = w.instances[0] as HaInstance;
      await a.startHolding();
      await w.inject('before.x12', Buffer.from(x12(1)));
      await w.settled(40_000, () => a.running);
      // Now every step hangs on the journal: the lease round, the outbox rescan and the drive of
      // the file dropped, the cycle's reads — each until its query or connect timeout (15 s, 5 s).
      const stopMs = await sigtermWhileFrozen(server, a, async () => {
        w.dropOutbox('frozen-out.x12', Buffer.from(x12(2)));
        await w.inject('frozen-in.x12', Buffer.from(x12(3)));
      });
      // The stop's bound is shutdownTimeout and a grace of 2 s (docs/reliability.md), 3 s more for a
      // busy machine. It took 13 s when the releases after the transfers had a deadline of their own.
      expect(stopMs, 'SIGTERM to exit (ms)').toBeLessThan(shutdownMs + 5_000);
      expect(a.proc?.exitCode).toBe(0);
      a.start();
      await w.settled(40_000, () => a.running);
    } finally {
      await w.close();
    }
  }, 150_000);
});
