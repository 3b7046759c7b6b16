/**
 * A `gridsync run` whose PostgreSQL journal turns read-only under it — a failed-over primary now in
 * recovery, a URL routed to a replica, `default_transaction_read_only` set by an operator: every
 * write is refused with SQLSTATE 25006. The daemon says so with its own code (`JOURNAL_UNAVAILABLE`,
 * the SQLSTATE as `dbCode`) on every line — a bare SQLSTATE as the code reached the logs before —
 * places, confirms and uploads nothing meanwhile — its /readyz says so once it holds no mailbox —
 * and delivers everything exactly once when writes are allowed again.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { eventually } from '../../helpers/daemon-child.js';
import { x12 } from '../../helpers/edi.js';
import { startHaWorld, type HaInstance } from '../../helpers/ha-world.js';
import { postgresForFile } from '../../helpers/postgres.js';

const server = postgresForFile('a journal turned read-only is not tested');

const setReadOnly = async (db: string, on: boolean): Promise<void> => {
  await server.admin(`ALTER DATABASE ${db} SET default_transaction_read_only = ${on ? 'on' : 'off'}`);
  // The setting applies to new sessions: end the daemon's, as a failover does.
  await server.admin('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [db]);
};

describe.skipIf(!server.available)('PostgreSQL journal turned read-only under a running daemon', () => {
  it('names it with a code of ours, changes nothing on the service meanwhile, then delivers once', async () => {
    const db = 'readonly_journal';
    const url = await server.createDatabase(db);
    const w = await startHaWorld({ journalUrl: url, instances: 1, leaseMs: 4_000, renewMs: 1_000 });
    try {
      const a = w.instances[0] as HaInstance;
      await a.startHolding();
      await w.inject('before.x12', Buffer.from(x12(1)));
      await w.settled(20_000);

      await setReadOnly(db, true);
      const from = a.lines().length;
      await w.inject('during-in.x12', Buffer.from(x12(2)));
      w.dropOutbox('during-out.x12', Buffer.from(x12(3)));
      const refused = (): Record<string, unknown>[] =>
        a
          .lines()
          .slice(from)
          .filter((l) => l.dbCode === '25006');
      // Both pipelines have met the refusal: the outbox claim and the inbound cycle.
      const met = (msg: string): boolean => refused().some((l) => l.msg === msg);
      await eventually(
        () => met('cannot journal the claim; will retry') && met('cycle failed; retrying with backoff'),
        20_000,
        'writes refused',
      );
      await new Promise((r) => setTimeout(r, 2_000));
      const during = a.lines().slice(from);
      // A claim refused at every rescan (every 500 ms here) is told once while the refusal lasts; it
      // was an error line per rescan before.
      expect(during.filter((l) => l.msg === 'cannot journal the claim; will retry' && l.level === 50)).toHaveLength(1);
      const codes = new Set(during.filter((l) => l.code !== undefined).map((l) => String(l.code)));
      expect(
        [...codes].filter((c) => !/^[A-Z]+_[A-Z_]+$/.test(c)),
        `codes logged: ${[...codes].join(', ')}`,
      ).toEqual([]);
      expect(codes).toContain('JOURNAL_UNAVAILABLE');
      // Nothing placed, confirmed or uploaded whose journal write could not be made.
      expect(fs.readdirSync(w.inbox)).toHaveLength(1);
      const parcels = await w.parcels();
      expect(parcels.find((p) => p.fileName === 'during-in.x12')?.status ?? 'missing').toBe('InBoxReady');
      expect(parcels.some((p) => p.fileName === 'during-out.x12')).toBe(false);
      expect(a.running).toBe(true);
      // Its lease gone and every lease round refused, the instance serves nothing: not ready, and
      // why (before, its cycles of no mailbox succeeded and /readyz said ready throughout).
      const unready = await eventually(
        async () => {
          const r = await a.readyz();
          return r.status === 503 && r;
        },
        15_000,
        '/readyz 503',
      ).catch(async () => a.readyz());
      expect(unready.status).toBe(503);
      expect(unready.lastError).toMatch(/read-only transaction/);

      await setReadOnly(db, false);
      await w.settled(40_000);
      expect(a.lines().filter((l) => l.msg === 'gridsync started')).toHaveLength(1);
      await eventually(async () => (await a.readyz()).status === 200, 15_000, '/readyz 200 again');
    } finally {
      await w.close();
    }
  }, 90_000);
});
