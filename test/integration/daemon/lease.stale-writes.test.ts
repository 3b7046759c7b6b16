/**
 * `gridsync_lease_stale_writes_refused_total` counts every journal write refused for a stale
 * fencing token, not only the one that ended the holding. Two instances on a real PostgreSQL: A
 * holds the mailbox through the daemon's lease wiring (keeper, metrics, registry); its lease runs
 * out while it stalls and B takes the mailbox over; A, unaware, then writes several times — a
 * burst in flight together (one batch) and some one after the other — and each write is refused
 * and counted. The holding ends once.
 */
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { LeaseMetrics } from '../../../src/daemon/lease-metrics.js';
import { daemonLeases } from '../../../src/daemon/leases.js';
import { InboundJournal, PgJournal } from '../../../src/journal/index.js';
import { silentLogger } from '../../../src/log.js';
import { postgresForFile } from '../../helpers/postgres.js';

const MB = 1001;
const server = postgresForFile('the stale-write count of the lease metrics is not tested');

/** A series' value in the registry's exposition text, as /metrics serves it. */
async function series(registry: Registry, name: string): Promise<number | undefined> {
  const line = (await registry.metrics()).split('\n').find((l) => l.startsWith(`${name}{mailbox="orders"}`));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe.skipIf(!server.available)('lease metrics: writes refused for a stale token', () => {
  it('counts each refused write of a stale holder; its holding ends once', async () => {
    const url = await server.createDatabase('stale_writes');
    const a = await PgJournal.open(url, 'test', { owner: 'host-a' });
    const b = await PgJournal.open(url, 'test', { owner: 'host-b' });
    const registry = new Registry();
    const metrics = new LeaseMetrics(registry);
    metrics.declare(['orders'], false);
    // Renewals far apart: nothing but the refused writes tells A that it lost the mailbox.
    const { keeper } = daemonLeases({
      leases: a.leases,
      ttlMs: 60_000,
      renewMs: 30_000,
      names: new Map([[MB, 'orders']]),
      logger: silentLogger,
      metrics,
      onTaken: () => undefined,
    });
    try {
      await keeper.start();
      expect(keeper.mayAct(MB)).toBe(true);
      const inA = new InboundJournal(a);
      await inA.recordListed(MB, { parcelId: 1 }); // A's token is good
      // A stalls past its lease (made to run out here rather than waited for); B takes over.
      await b.maintain("UPDATE lease SET expires_at = clock_timestamp() - interval '1 second'");
      expect(await b.leases.acquire(MB, 60_000)).toMatchObject({ owner: 'host-b' });

      // A wakes with writes in flight together, then tries a few more one after the other.
      const burst = await Promise.allSettled([2, 3, 4, 5].map((parcelId) => inA.recordListed(MB, { parcelId })));
      expect(burst.map((r) => (r.status === 'rejected' ? (r.reason as { code?: string }).code : 'written'))).toEqual(
        Array(4).fill('JOURNAL_LEASE_LOST'),
      );
      for (const parcelId of [6, 7]) await expect(inA.recordListed(MB, { parcelId })).rejects.toMatchObject({ code: 'JOURNAL_LEASE_LOST' });

      expect(await series(registry, 'gridsync_lease_stale_writes_refused_total')).toBe(6);
      expect(await series(registry, 'gridsync_lease_lost_total')).toBe(1);
      expect(await series(registry, 'gridsync_lease_held')).toBe(0);
      expect(keeper.mayAct(MB)).toBe(false);
      // Nothing of A's stale writes landed.
      expect(await b.all('SELECT parcel_id FROM inbound_parcels ORDER BY parcel_id')).toEqual([{ parcel_id: 1 }]);
    } finally {
      await keeper.stop();
      await a.close();
      await b.close();
    }
  }, 60_000);
});
