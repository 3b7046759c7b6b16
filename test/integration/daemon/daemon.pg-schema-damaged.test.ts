/**
 * A table of the shared PostgreSQL journal renamed away (as good as dropped) by a DBA while two
 * `gridsync run` instances serve the mailbox. Before, the instances read pg's 42P01 as
 * `JOURNAL_UNAVAILABLE` and went on retrying as if the server were down — inbound steps still
 * written while every outbound one failed — and only their next start named the damage. Now an
 * instance that meets the missing table stops as its start would: one line naming the table,
 * exit 2 (`JOURNAL_SCHEMA_DAMAGED`, which systemd does not restart), no stack trace. The instance
 * that takes the mailbox over meets it too. With the table back, a start finishes everything once.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { eventually } from '../../helpers/daemon-child.js';
import { startHaWorld, type HaInstance } from '../../helpers/ha-world.js';
import { postgresForFile, queryIn } from '../../helpers/postgres.js';

const server = postgresForFile('a shared journal damaged under running instances is not tested');

const DAMAGED = /is damaged: table outbound_files missing .*\[JOURNAL_SCHEMA_DAMAGED\]$/m;

describe.skipIf(!server.available)('the shared journal damaged under running instances', () => {
  it('a table renamed away: each instance that meets it stops with exit 2 naming it; restored, every parcel and file once', async () => {
    const url = await server.createDatabase('schema_damaged_running');
    const w = await startHaWorld({ journalUrl: url, instances: 2, leaseMs: 3_000, renewMs: 750 });
    try {
      const [a, b] = w.instances as [HaInstance, HaInstance];
      await a.startHolding();
      b.start();
      await w.burst('one', 3);
      await w.settled(30_000);
      // Both running (past the start's own check), b holding nothing.
      await eventually(() => b.lines().some((l) => l.msg === 'gridsync started'), 20_000, 'b started');

      await queryIn(url, 'ALTER TABLE outbound_files RENAME TO outbound_files_aside');
      await w.burst('two', 3);
      for (const i of [a, b]) await stopsNamingTheDamage(i);

      await queryIn(url, 'ALTER TABLE outbound_files_aside RENAME TO outbound_files');
      a.start();
      await w.settled(60_000, () => a.running);
    } finally {
      await w.close();
    }
  }, 240_000);

  it('damaged between the open and the start: the start fails, and the process exits instead of serving on', async () => {
    // Before, `run` printed the start's error and stayed up: the open had started the health
    // endpoint, which nobody closed, so systemd saw a live process that did nothing.
    const url = await server.createDatabase('schema_damaged_starting');
    const w = await startHaWorld({ journalUrl: url, instances: 1, leaseMs: 3_000, renewMs: 750 });
    try {
      const [a] = w.instances as [HaInstance];
      a.start({ GRIDSYNC_PAUSE_AT: 'run.opened:1' });
      await eventually(() => fs.readFileSync(a.logFile, 'utf8').includes('pause point run.opened reached'), 20_000, 'opened');
      await queryIn(url, 'ALTER TABLE outbound_files RENAME TO outbound_files_aside');
      a.signal('SIGCONT');
      await stopsNamingTheDamage(a);
    } finally {
      await w.close();
    }
  }, 120_000);
});

/** The instance exits 2 with one line for the operator naming the table, logged once with its code. */
async function stopsNamingTheDamage(i: HaInstance): Promise<void> {
  await eventually(() => !i.running, 40_000, `${i.name} stops on the damaged journal`);
  expect(i.proc?.exitCode, i.name).toBe(2);
  const text = fs.readFileSync(i.logFile, 'utf8');
  const told = text.split('\n').filter((l) => !l.startsWith('{') && !l.startsWith('pause point') && l.trim() !== '');
  expect(told, `${i.name}: one line for the operator`).toHaveLength(1);
  expect(told[0]).toMatch(DAMAGED);
  expect(text, 'no stack trace').not.toMatch(/^\s+at /m);
  const logged = i.lines().filter((l) => l.code === 'JOURNAL_SCHEMA_DAMAGED' && l.level === 50);
  expect(logged, `${i.name}: logged once, with its code`).toHaveLength(1);
  expect(logged[0]?.err).toMatch(/table outbound_files missing/);
}
