/**
 * The shared PostgreSQL journal changed under gridsync by an operator, a restore or a careless DBA
 * (the built CLI, a real PostgreSQL started by the test, the tampering in real SQL):
 *
 * - `schema_migrations` emptied (or dropped) while the tables stayed: every `once` failed with
 *   `relation "inbound_parcels" already exists` (exit 1), for good, though nothing was wrong with
 *   the journal's data. Now the migrations recognise their own objects, record themselves again
 *   and the run goes on: every parcel once in the inbox.
 * - a table of the journal dropped: `once` failed with `relation … does not exist` (exit 1, as if
 *   the database were briefly unreachable) — or, with `schema_migrations` itself emptied, created
 *   the table again empty. Now the start is refused with one line naming the table (exit 2,
 *   `JOURNAL_SCHEMA_DAMAGED`), nothing is created, and `doctor` fails its schema line with the same words.
 * - a table renamed away while `once` runs (the process frozen at a pause point meanwhile): once
 *   went on as for a database briefly away and exited 1; now it stops as its start would have
 *   been refused, exit 2 with the same line, and the next run delivers each parcel once.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { startEmulator } from '@gridsync/emulator';
import { makeDaemonWorld, seedEmbeddedService } from '../../helpers/daemon-config.js';
import { eventually, runCli, startCli } from '../../helpers/daemon-child.js';
import { x12 } from '../../helpers/edi.js';
import { postgresForFile, queryIn } from '../../helpers/postgres.js';

const server = postgresForFile('a tampered PostgreSQL journal schema is not tested');

async function injectMore(dataFile: string, fileName: string, control: number): Promise<void> {
  const emu = await startEmulator({ port: 0, dataFile });
  try {
    await emu.inject({ mailboxId: 1001, fileName, content: Buffer.from(x12(control)) });
  } finally {
    await emu.close();
  }
}

const inboxFiles = (dir: string): string[] =>
  fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.x12'))
    .sort();

describe.skipIf(!server.available)('a tampered PostgreSQL journal schema', () => {
  it('schema_migrations emptied, then dropped: once records the versions again and delivers each parcel once (exit 0)', async () => {
    const w = makeDaemonWorld();
    const url = await server.createDatabase('tamper_versions');
    const env = { GRIDSYNC_JOURNAL_URL: url };
    try {
      const { dataFile } = await seedEmbeddedService(w, [{ fileName: 'a.x12', content: x12(1) }]);
      const first = runCli(['once', '-c', w.configFile], env);
      expect(first.status, first.stderr).toBe(0);
      expect(inboxFiles(w.inbox)).toEqual(['a.x12']);
      const recorded = await versionsIn(url);
      expect(recorded.length).toBeGreaterThan(0);

      await adminIn(url, 'TRUNCATE schema_migrations');
      // Instances still running: status reads the journal they write, not one gridsync never ran on.
      const status = runCli(['status', '-c', w.configFile], env);
      expect(status.stderr).not.toMatch(/has not run/);
      expect(status.status, status.stdout + status.stderr).toBe(0);
      await injectMore(dataFile, 'b.x12', 2);
      const second = runCli(['once', '-c', w.configFile], env);
      expect(second.stderr).not.toMatch(/already exists/);
      expect(second.status, second.stderr).toBe(0);
      expect(inboxFiles(w.inbox)).toEqual(['a.x12', 'b.x12']);
      expect(await versionsIn(url)).toEqual(recorded);

      await adminIn(url, 'DROP TABLE schema_migrations');
      await injectMore(dataFile, 'c.x12', 3);
      const third = runCli(['once', '-c', w.configFile], env);
      expect(third.status, third.stderr).toBe(0);
      expect(inboxFiles(w.inbox)).toEqual(['a.x12', 'b.x12', 'c.x12']);
      expect(await versionsIn(url)).toEqual(recorded);
    } finally {
      w.cleanup();
    }
  }, 120_000);

  it('a table dropped: once refuses with one line naming it (exit 2), creates nothing, and runs again once it is back', async () => {
    const w = makeDaemonWorld();
    const url = await server.createDatabase('tamper_dropped');
    const env = { GRIDSYNC_JOURNAL_URL: url };
    try {
      const { dataFile } = await seedEmbeddedService(w, [{ fileName: 'a.x12', content: x12(1) }]);
      expect(runCli(['once', '-c', w.configFile], env).status).toBe(0);
      await adminIn(url, 'ALTER TABLE inbound_parcels RENAME TO inbound_parcels_aside');
      await injectMore(dataFile, 'b.x12', 2);
      for (const tamper of [[], ['TRUNCATE schema_migrations']]) {
        for (const sql of tamper) await adminIn(url, sql);
        const r = runCli(['once', '-c', w.configFile], env);
        expect(r.status, r.stderr).toBe(2);
        const lines = r.stderr.trim().split('\n');
        expect(lines, r.stderr).toHaveLength(1); // no stack trace
        expect(lines[0]).toMatch(/journal postgres:\/\/\S+ is damaged: table inbound_parcels missing .*\[JOURNAL_SCHEMA_DAMAGED\]$/);
        expect(await tablesIn(url)).not.toContain('inbound_parcels');
      }
      expect(inboxFiles(w.inbox)).toEqual(['a.x12']);
      const run = runCli(['run', '-c', w.configFile], env);
      expect(run.status, run.stderr).toBe(2);
      expect(run.stderr).toMatch(/table inbound_parcels missing .*\[JOURNAL_SCHEMA_DAMAGED\]$/m);
      expect(run.stderr).not.toMatch(/^\s+at /m);
      const doctor = runCli(['doctor', '-c', w.configFile], env);
      expect(doctor.status).toBe(2);
      expect(doctor.stdout + doctor.stderr).toMatch(/^✗ journal schema\b.*table inbound_parcels missing/m);

      // The table restored (here: renamed back): the run goes on, and a.x12 is not delivered again.
      await adminIn(url, 'ALTER TABLE inbound_parcels_aside RENAME TO inbound_parcels');
      const after = runCli(['once', '-c', w.configFile], env);
      expect(after.status, after.stderr).toBe(0);
      expect(inboxFiles(w.inbox)).toEqual(['a.x12', 'b.x12']);
    } finally {
      w.cleanup();
    }
  }, 120_000);

  it('a table renamed away while once runs: it takes no new item and exits 2 with the start’s line; restored, each parcel once', async () => {
    const w = makeDaemonWorld();
    const url = await server.createDatabase('tamper_during_once');
    const env = { GRIDSYNC_JOURNAL_URL: url };
    try {
      await seedEmbeddedService(
        w,
        [1, 2, 3].map((k) => ({ fileName: `p${k}.x12`, content: x12(k) })),
      );
      const child = startCli(['once', '-c', w.configFile], { ...env, GRIDSYNC_PAUSE_AT: 'in.before-rename:1' });
      await eventually(() => child.output().includes('pause point in.before-rename reached'), 30_000, 'once paused before a placement');
      await adminIn(url, 'ALTER TABLE inbound_parcels RENAME TO inbound_parcels_aside');
      child.kill('SIGCONT');
      const r = await child.exited;
      expect(r.code, r.stderr + r.stdout.slice(-4000)).toBe(2);
      const told = r.stderr.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('pause point'));
      expect(told, r.stderr).toHaveLength(1);
      expect(told[0]).toMatch(/is damaged: table inbound_parcels missing .*\[JOURNAL_SCHEMA_DAMAGED\]$/);

      await adminIn(url, 'ALTER TABLE inbound_parcels_aside RENAME TO inbound_parcels');
      const after = runCli(['once', '-c', w.configFile], env);
      expect(after.status, after.stderr).toBe(0);
      expect(inboxFiles(w.inbox)).toEqual(['p1.x12', 'p2.x12', 'p3.x12']);
    } finally {
      w.cleanup();
    }
  }, 120_000);
});

const adminIn = async (url: string, sql: string): Promise<void> => void (await queryIn(url, sql));
const tablesIn = async (url: string): Promise<string[]> =>
  (await queryIn<{ t: string }>(url, "SELECT table_name AS t FROM information_schema.tables WHERE table_schema = 'public'")).map(
    (r) => r.t,
  );
const versionsIn = async (url: string): Promise<number[]> =>
  (await queryIn<{ version: number }>(url, 'SELECT version FROM schema_migrations ORDER BY version')).map((r) => r.version);
