/**
 * The signal a mailbox's cycles run under (the run's signal, also aborted when the mailbox's lease
 * is lost) is one per holding, not one per cycle: on Node 20 every combined signal stays
 * registered with the run's signal for as long as the process lives, so a new one per cycle grew
 * the heap by ~85 bytes per mailbox and poll, for good. Two instances on a real PostgreSQL: A holds
 * the mailbox, loses it to B, and takes it again.
 */
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { LeaseMetrics } from '../../../src/daemon/lease-metrics.js';
import { daemonLeases } from '../../../src/daemon/leases.js';
import { PgJournal } from '../../../src/journal/index.js';
import { silentLogger } from '../../../src/log.js';
import { postgresForFile } from '../../helpers/postgres.js';

const MB = 1001;
const server = postgresForFile('the signal of a lease holding is not tested');

describe.skipIf(!server.available)('the signal of a mailbox held under a lease', () => {
  it('is the same for every cycle of one holding, aborted when it is lost, and new when the mailbox is taken again', async () => {
    const url = await server.createDatabase('lease_signal');
    const a = await PgJournal.open(url, 'test', { owner: 'host-a' });
    const b = await PgJournal.open(url, 'test', { owner: 'host-b' });
    const metrics = new LeaseMetrics(new Registry());
    metrics.declare(['orders'], false);
    const { keeper, view } = daemonLeases({
      leases: a.leases,
      ttlMs: 60_000,
      renewMs: 30_000,
      names: new Map([[MB, 'orders']]),
      logger: silentLogger,
      metrics,
      onTaken: () => undefined,
    });
    const run = new AbortController();
    try {
      await keeper.start();
      expect(keeper.mayAct(MB)).toBe(true);
      const first = view.signal(MB, run.signal);
      expect(view.signal(MB, run.signal)).toBe(first);
      expect(first.aborted).toBe(false);

      // B takes the mailbox over; A learns it at its next round (the renewal is refused).
      await b.maintain("UPDATE lease SET expires_at = clock_timestamp() - interval '1 second'");
      expect(await b.leases.acquire(MB, 60_000)).toMatchObject({ owner: 'host-b' });
      await keeper.tick();
      expect(keeper.mayAct(MB)).toBe(false);
      expect(first.aborted).toBe(true);
      expect(view.signal(MB, run.signal).aborted).toBe(true);

      // B's lease runs out: A takes the mailbox again, under a signal of its own.
      await b.maintain("UPDATE lease SET expires_at = clock_timestamp() - interval '1 second'");
      await keeper.tick();
      expect(keeper.mayAct(MB)).toBe(true);
      const second = view.signal(MB, run.signal);
      expect(second).not.toBe(first);
      expect(second.aborted).toBe(false);
      expect(view.signal(MB, run.signal)).toBe(second);

      run.abort();
      expect(second.aborted).toBe(true);
    } finally {
      await keeper.stop();
      await a.close();
      await b.close();
    }
  }, 60_000);
});
