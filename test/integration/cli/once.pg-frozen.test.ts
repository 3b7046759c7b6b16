/**
 * `gridsync once` on a PostgreSQL journal whose server is frozen (SIGSTOP to the postmaster and
 * every backend) in the middle of a backlog: it exits 1 with `JOURNAL_UNAVAILABLE` after its
 * statements in flight have timed out, instead of grinding through the queued parcels — each of
 * which waited for the connect timeout (5 s) to read its row, a few at a time, although the lease
 * was lost and none of them could do anything. Woken, the next `once` delivers everything once.
 * Frozen before it starts, `once` fails at once with the same code.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { startCli } from '../../helpers/daemon-child.js';
import { x12 } from '../../helpers/edi.js';
import { startHaWorld } from '../../helpers/ha-world.js';
import { postgresForFile } from '../../helpers/postgres.js';

const server = postgresForFile('once against a frozen journal server is not tested');

describe.skipIf(!server.available)('once against a frozen PostgreSQL server', () => {
  it('gives up its backlog within the journal timeouts, not a connect timeout per queued parcel; the next once delivers all once', async () => {
    const url = await server.createDatabase('once_frozen');
    const w = await startHaWorld({ journalUrl: url, instances: 1, leaseMs: 4_000, renewMs: 1_000 });
    const env = { GRIDSYNC_JOURNAL_URL: url };
    const cfg = path.join(w.dir, 'host-a', 'gridsync.yaml');
    try {
      const frozenAtStart = startCli(['once', '-c', cfg], env);
      server.freeze(true);
      try {
        const r = await frozenAtStart.exited;
        expect(r.code).toBe(1);
        expect(r.stderr).toMatch(/\[JOURNAL_UNAVAILABLE\]/);
      } finally {
        server.freeze(false);
      }

      for (let i = 0; i < 100; i++) await w.inject(`in${i}.x12`, Buffer.from(x12(10 + i)));
      const once = startCli(['once', '-c', cfg], env);
      await once.waitFor(/parcel received/, 30_000);
      server.freeze(true);
      const t = performance.now();
      let r: Awaited<typeof once.exited>;
      try {
        // After fix: the lease's end, the statements in flight (query timeout 15 s), a few reads
        // after the cycle (connect timeout 5 s each), the journal's release (shutdownTimeout 3 s):
        // about 35 s. Before: 5 s more for every four parcels still queued.
        const limit = setTimeout(() => once.kill('SIGKILL'), 75_000);
        r = await once.exited;
        clearTimeout(limit);
      } finally {
        server.freeze(false);
      }
      expect(r.signal, `once still ran ${Math.round((performance.now() - t) / 1000)} s after the freeze`).toBeNull();
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/\[JOURNAL_UNAVAILABLE\]/);

      const again = await startCli(['once', '-c', cfg], env).exited;
      expect(again.code, again.stderr).toBe(0);
      expect(await w.violations()).toEqual([]);
    } finally {
      server.freeze(false);
      await w.close();
    }
  }, 240_000);
});
