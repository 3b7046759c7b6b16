/**
 * The `lease` table emptied under two running instances (a DBA's TRUNCATE, a restore without its
 * rows): the next take of the mailbox inserted a fresh row at token 1, so fencing tokens went
 * backwards and repeated. Staging files carry the token in their names, and a new holder removes
 * the unfinished downloads of earlier holders by comparing tokens: one left under the token the
 * mailbox had before stayed in the staging folder for good, and a holder under a repeated token
 * wrote to the very staging names of an earlier one. Now a mailbox's token never goes back, with
 * or without its row. Two `gridsync run` instances, one real PostgreSQL, the TRUNCATE issued by the
 * test; then the holder killed: every parcel once, every token above the one before.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventually } from '../../helpers/daemon-child.js';
import { MAILBOX, startHaWorld, type HaInstance, type HaWorld } from '../../helpers/ha-world.js';
import { postgresForFile, queryIn } from '../../helpers/postgres.js';

const server = postgresForFile('the lease table emptied under two instances is not tested');

const LEASE_MS = 4_000;
const RENEW_MS = 1_000;

/** Every lease taken by any instance so far, in the order of their log times. */
function takes(w: HaWorld): { at: number; who: string; token: number }[] {
  return w.instances
    .flatMap((i) =>
      i
        .lines()
        .filter((l) => l.msg === 'mailbox lease taken')
        .map((l) => ({ at: Number(l.time), who: i.name, token: Number(l.fencingToken) })),
    )
    .sort((x, y) => x.at - y.at);
}

describe.skipIf(!server.available)('the lease table emptied under running instances', () => {
  it('tokens never go back: an earlier holder’s unfinished download is removed, every parcel and file once', async () => {
    const url = await server.createDatabase('lease_truncated');
    const w = await startHaWorld({ journalUrl: url, instances: 2, leaseMs: LEASE_MS, renewMs: RENEW_MS });
    try {
      const [a, b] = w.instances as [HaInstance, HaInstance];
      await a.startHolding();
      b.start();
      await w.burst('one', 6);
      await w.settled(30_000);
      const before = takes(w);
      const highest = Math.max(...before.map((t) => t.token));

      // A download a holding under that token left unfinished (the holder lost its lease mid-download).
      const orphan = path.join(path.dirname(w.inbox), '.gridsync-staging', `${MAILBOX}-987654.t${highest}.part`);
      fs.writeFileSync(orphan, 'half a download');
      await queryIn(url, 'TRUNCATE lease');
      await w.burst('two', 6);
      await eventually(() => takes(w).length > before.length, 20_000, 'the mailbox taken again after the TRUNCATE');
      await w.settled(30_000);
      const retaken = takes(w)[before.length];
      expect.soft(retaken?.token, JSON.stringify(takes(w))).toBeGreaterThan(highest);
      expect.soft(fs.existsSync(orphan), 'the unfinished download of the holding before').toBe(false);

      // The holder dies: the survivor takes over above every token so far.
      const holder = w.instances.find((i) => i.name === takes(w).at(-1)?.who) as HaInstance;
      const taken = takes(w).length;
      await holder.kill('SIGKILL');
      await w.burst('three', 6);
      await eventually(() => takes(w).length > taken, LEASE_MS + 15_000, 'the survivor takes over');
      await w.settled(30_000);
      const tokens = takes(w).map((t) => t.token);
      expect(tokens, JSON.stringify(takes(w))).toEqual([...tokens].sort((x, y) => x - y));
      expect(new Set(tokens).size, JSON.stringify(takes(w))).toBe(tokens.length);
    } finally {
      await w.close();
    }
  }, 180_000);
});
