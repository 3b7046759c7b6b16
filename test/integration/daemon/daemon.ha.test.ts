/**
 * Two `gridsync run` instances as on two hosts (own stateDir each), sharing the inbox and outbox
 * folders, one service (the emulator as its own process) and one PostgreSQL journal. Only the
 * mailbox's lease holder works it: every parcel lands exactly once and is confirmed, every outbox
 * file is sent exactly once — while the holder is killed (the other takes over within the lease
 * plus 2 s) and while it is stopped with SIGTERM (the lease is handed back at once).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventually } from '../../helpers/daemon-child.js';
import { MAILBOX, startHaWorld, type HaInstance } from '../../helpers/ha-world.js';
import { postgresForFile } from '../../helpers/postgres.js';

const server = postgresForFile('two instances on one journal are not tested');

const LEASE_MS = 4_000;
const RENEW_MS = 1_000;
const taken = (i: HaInstance): number => i.lines().filter((l) => l.msg === 'mailbox lease taken').length;
/** A series' value on an instance's /metrics (any labels; undefined when absent). */
const series = (text: string, name: string): number | undefined => {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
};

describe.skipIf(!server.available)('two instances, one PostgreSQL journal', () => {
  it('one holder works the mailbox; a killed holder is replaced within the lease + 2 s; SIGTERM hands over at once; nothing lost or doubled', async () => {
    const url = await server.createDatabase('ha_pair');
    const w = await startHaWorld({ journalUrl: url, instances: 2, leaseMs: LEASE_MS, renewMs: RENEW_MS });
    try {
      const [a, b] = w.instances as [HaInstance, HaInstance];
      a.start();
      await eventually(() => taken(a) === 1, 20_000, 'a takes the lease');
      b.start();
      await w.burst('one', 12);
      await w.settled(30_000);
      expect(taken(b)).toBe(0); // the holder is alive and renews: b never works the mailbox

      // The holder dies: the other takes over after the expiry, at once.
      await w.burst('two', 12);
      const killedAt = Date.now();
      await a.kill('SIGKILL');
      // A download the dead holder had not finished (its token in the name): the next holder
      // removes it; a staged file a journal row points at would be the next holder's to place.
      const tokenA = Number(a.lines().find((l) => l.msg === 'mailbox lease taken')?.fencingToken);
      const orphan = path.join(path.dirname(w.inbox), '.gridsync-staging', `${MAILBOX}-987654.t${tokenA}.part`);
      fs.writeFileSync(orphan, 'half a download');
      await eventually(() => taken(b) === 1, LEASE_MS + 10_000, 'b takes over');
      const failoverMs = Date.now() - killedAt;
      expect(failoverMs).toBeLessThan(LEASE_MS + 2_000);
      await w.settled(30_000);
      expect(fs.existsSync(orphan)).toBe(false);
      // What an operator sees of it: b holds the mailbox, took it once, after a gap it measured.
      const bMetrics = await b.scrape();
      expect(series(bMetrics, 'gridsync_lease_held')).toBe(1);
      expect(series(bMetrics, 'gridsync_lease_acquired_total')).toBe(1);
      expect(series(bMetrics, 'gridsync_lease_lost_total')).toBe(0);
      expect(series(bMetrics, 'gridsync_lease_takeover_seconds_count')).toBe(1);
      expect(series(bMetrics, 'gridsync_lease_takeover_seconds_sum')).toBeGreaterThan(0);

      // A planned stop: b hands the lease back; a (restarted) takes it long before an expiry.
      const starts = a.lines().filter((l) => l.msg === 'gridsync started').length;
      a.start();
      await eventually(() => a.lines().filter((l) => l.msg === 'gridsync started').length > starts, 30_000, 'a runs again');
      await w.burst('three', 6);
      const before = taken(a);
      const stoppedAt = Date.now();
      await b.kill('SIGTERM');
      await eventually(() => taken(a) > before, 10_000, 'a takes over after the handover');
      expect(Date.now() - stoppedAt).toBeLessThan(LEASE_MS);
      await w.settled(30_000);
      expect(series(await a.scrape(), 'gridsync_lease_held')).toBe(1);
      const tokens = [...a.lines(), ...b.lines()].filter((l) => l.msg === 'mailbox lease taken').map((l) => Number(l.fencingToken));
      expect(tokens.length).toBeGreaterThanOrEqual(3);
      expect(new Set(tokens).size).toBe(tokens.length); // every takeover a new token
    } finally {
      await w.close();
    }
  }, 120_000);
});
