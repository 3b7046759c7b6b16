/**
 * The journal's PostgreSQL server out of connection slots (`max_connections` reached: another
 * application's pool, a leak) while `gridsync run` works, its own sessions ended: every new
 * connection is refused with SQLSTATE 53300. The daemon keeps running and says why on every line,
 * with a code (the whole cycle's failure carried none before), and once slots are free again it
 * delivers what arrived meanwhile exactly once. The outage's end was told as "the service answers
 * again", the service never having been away; now as the cycles getting through, with the code.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { eventually } from '../../helpers/daemon-child.js';
import { x12 } from '../../helpers/edi.js';
import { startHaWorld, type HaInstance } from '../../helpers/ha-world.js';
import { postgresForFile } from '../../helpers/postgres.js';

const server = postgresForFile('a journal server out of connection slots is not tested', { maxConnections: 10 });

describe.skipIf(!server.available)('PostgreSQL server out of connection slots under a running daemon', () => {
  it('keeps running, names the cause with a code on every line, then delivers everything once', async () => {
    const url = await server.createDatabase('slots');
    const w = await startHaWorld({ journalUrl: url, instances: 1, leaseMs: 4_000, renewMs: 1_000 });
    const held: pg.Client[] = [];
    // Takes every slot left: as superuser, the reserved ones too.
    const takeSlots = async (): Promise<void> => {
      for (;;) {
        const c = new pg.Client({ connectionString: url });
        try {
          await c.connect();
        } catch {
          return;
        }
        held.push(c);
      }
    };
    try {
      const a = w.instances[0] as HaInstance;
      await a.startHolding();
      await w.inject('before.x12', Buffer.from(x12(1)));
      await w.settled(20_000);

      await takeSlots();
      const from = a.lines().length;
      // The daemon's sessions end (as after a database restart); the slots they free are taken at once.
      // A backend's slot is free only once it has exited (the call waits for that), and the daemon
      // may open a session again before the test takes the slot: such a session is ended in turn.
      // Taking the slots once after a bare pg_terminate_backend, the test sometimes took none and
      // the daemon worked on through the "outage".
      for (;;) {
        const ended = await (held[0] as pg.Client).query(
          "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE application_name = 'gridsync'",
        );
        await takeSlots();
        if (ended.rowCount === 0) break;
      }
      await w.inject('during-in.x12', Buffer.from(x12(2)));
      w.dropOutbox('during-out.x12', Buffer.from(x12(3)));
      await eventually(
        () =>
          a
            .lines()
            .slice(from)
            .some((l) => l.msg === 'cycle failed; retrying with backoff'),
        20_000,
        'a cycle failed',
      );
      await new Promise((r) => setTimeout(r, 3_000));
      const troubled = a
        .lines()
        .slice(from)
        .filter((l) => l.err !== undefined);
      expect(troubled.filter((l) => l.code === undefined).map((l) => l.msg)).toEqual([]);
      expect(troubled.some((l) => l.code === 'JOURNAL_UNAVAILABLE' && l.dbCode === '53300')).toBe(true);
      expect(a.running).toBe(true);

      for (const c of held.splice(0)) await c.end();
      await w.settled(40_000);
      // Its end is told as the cycles' (with the journal's code), not as the service answering again.
      const ended = a.lines().filter((l) => l.msg === 'cycles get through again; back to the normal schedule');
      expect(ended.map((l) => l.code)).toEqual(['JOURNAL_UNAVAILABLE']);
      expect(a.lines().filter((l) => l.msg === 'gridsync started')).toHaveLength(1);
    } finally {
      for (const c of held) await c.end().catch(() => undefined);
      await w.close();
    }
  }, 90_000);
});
