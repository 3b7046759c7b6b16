/**
 * A `gridsync run` on a PostgreSQL journal outlives the database going away for a few seconds:
 * the outbox scans that run meanwhile cannot read the journal, and the daemon keeps running
 * (it crashed on an unhandled rejection before), then delivers what arrived during and after the
 * outage exactly once.
 */
import { describe, expect, it } from 'vitest';
import { x12 } from '../../helpers/edi.js';
import { startHaWorld, type HaInstance } from '../../helpers/ha-world.js';
import { postgresForFile } from '../../helpers/postgres.js';

const server = postgresForFile('a journal outage is not tested');

describe.skipIf(!server.available)('PostgreSQL outage under a running daemon', () => {
  it('keeps running while the database is down, then delivers everything exactly once', async () => {
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
});
