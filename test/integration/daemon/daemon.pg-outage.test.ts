/**
 * A `gridsync run` on a PostgreSQL journal outlives the database going away for a few seconds:
 * the outbox scans that run meanwhile cannot read the journal, and the daemon keeps running
 * (it crashed on an unhandled rejection before), then delivers what arrived during and after the
 * outage exactly once.
 */
import { describe, expect, it, type TestContext } from 'vitest';
import { x12 } from '../../helpers/edi.js';
import { startHaWorld, type HaInstance } from '../../helpers/ha-world.js';
import { postgresAvailable, startPostgres, type PostgresServer } from '../../helpers/postgres.js';

const available = postgresAvailable('a journal outage is not tested');

/**
 * A server of the test's own, stopped when it ends: each test takes its server down for seconds
 * (3 s, 12 s), so on one server per file they ran one after the other; with one each, side by side.
 */
async function serverOf(ctx: TestContext): Promise<PostgresServer> {
  const server = await startPostgres();
  ctx.onTestFinished(() => server.stop());
  return server;
}

describe.skipIf(!available).concurrent('PostgreSQL outage under a running daemon', () => {
  it('keeps running while the database is down, then delivers everything exactly once', async (ctx) => {
    const server = await serverOf(ctx);
    const url = await server.createDatabase('outage');
    const w = await startHaWorld({ journalUrl: url, instances: 1, leaseMs: 4_000, renewMs: 1_000 });
    try {
      const a = w.instances[0] as HaInstance;
      await a.startHolding();
      let control = 1;
      w.dropOutbox('before.x12', Buffer.from(x12(control++)));
      // Down for several outbox rescans (every 500 ms here).
      const down = server.restart(3_000);
      await new Promise((r) => setTimeout(r, 500));
      w.dropOutbox('during.x12', Buffer.from(x12(control++)));
      await down;
      expect(a.running).toBe(true);
      await w.inject('after-in.x12', Buffer.from(x12(control++)));
      w.dropOutbox('after-out.x12', Buffer.from(x12(control++)));
      await w.settled(40_000, () => a.running);
      expect(a.running).toBe(true);
      expect(a.lines().filter((l) => l.msg === 'gridsync started')).toHaveLength(1);
    } finally {
      await w.close();
    }
  }, 90_000);

  it('through an outage of many rescans and lease rounds: one line when the trouble starts, one when it ends', async (ctx) => {
    const server = await serverOf(ctx);
    const url = await server.createDatabase('outage_lines');
    const w = await startHaWorld({ journalUrl: url, instances: 1, leaseMs: 4_000, renewMs: 1_000 });
    try {
      const a = w.instances[0] as HaInstance;
      await a.startHolding();
      w.dropOutbox('before.x12', Buffer.from(x12(1)));
      await w.settled(40_000, () => a.running);
      const before = a.lines().length;
      // Down for about 24 outbox rescans (every 500 ms) and 12 lease rounds (every second).
      const down = server.restart(12_000);
      const upAt = Date.now() + 12_000; // stopped by now; started no sooner
      await new Promise((r) => setTimeout(r, 500));
      w.dropOutbox('during.x12', Buffer.from(x12(2)));
      await down;
      await w.inject('after-in.x12', Buffer.from(x12(3)));
      await w.settled(40_000, () => a.running);
      const lines = a.lines().slice(before);
      const loud = lines.filter((l) => (l.level as number) >= 40).map((l) => `${String(l.msg)} [${String(l.code)}]`);
      const said = (msg: string, level: number): Record<string, unknown>[] => lines.filter((l) => l.msg === msg && l.level === level);
      // Each trouble once at warn with its code when it starts, once at info when it ends, with
      // how long it lasted and how much was not told. Before: 27 lease-round lines, 20 of the
      // outbox's rows, 5 of its scans, each at warn.
      for (const [started, ended] of [
        ['lease renewal round failed; retrying', 'lease rounds get through again'],
        ['outbox rows not queued: the journal cannot be read; the next scan tries again', 'outbox rows queued again'],
      ] as const) {
        expect(
          said(started, 40).map((l) => l.code),
          started,
        ).toEqual(['JOURNAL_UNAVAILABLE']);
        const end = said(ended, 30);
        expect(
          end.map((l) => l.code),
          ended,
        ).toEqual(['JOURNAL_UNAVAILABLE']);
        expect(end[0]?.suppressed as number, ended).toBeGreaterThanOrEqual(5);
        expect(end[0]?.durationMs as number, ended).toBeGreaterThanOrEqual(5_000);
      }
      for (const msg of [
        'outbox scan failed; retrying',
        'outbound files wait: the journal cannot be used',
        'cannot journal the claim; will retry',
        'cannot record the cycle in the journal',
      ])
        expect(loud.filter((l) => l.startsWith(msg)).length, msg).toBeLessThanOrEqual(1);
      expect(loud.filter((l) => l.startsWith('outbound task failed unexpectedly'))).toEqual([]);
      // The lease ends a few seconds into the outage; the scans that then skip the journal (only
      // the holder claims) are no sign it answers again. Before, that line came mid-outage.
      const scansBack = said('outbox scans get through again', 30).map((l) => Number(l.time));
      expect(said('outbox scan failed; retrying', 40), 'the outage reached a scan').toHaveLength(1);
      expect(scansBack, 'told once, when it ends').toHaveLength(1);
      for (const at of scansBack) expect(at, 'outbox scans get through again, mid-outage').toBeGreaterThanOrEqual(upAt);
      expect(loud.length, loud.join('\n')).toBeLessThanOrEqual(12);
    } finally {
      await w.close();
    }
  }, 120_000);
});
