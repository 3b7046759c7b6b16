/**
 * `gridsync journal migrate` from the outside (the built CLI in a child process): a journal that
 * real cycles filled is copied SQLite → PostgreSQL and back, row for row; a second run changes
 * nothing; it refuses beside a running daemon (SQLite's lock) and beside a live lease
 * (PostgreSQL); the database password never reaches its output. Both backends refuse a journal
 * written by a newer schema.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Journal, PgJournal, type JournalStore } from '../../../src/journal/index.js';
import { makeDaemonWorld } from '../../helpers/daemon-config.js';
import { runCli, startCli } from '../../helpers/daemon-child.js';
import { postgresForFile } from '../../helpers/postgres.js';

const server = postgresForFile('gridsync journal migrate is not tested');
const SECRET = 'migr4te-s3cret';

/** Every row of the journal's tables, in key order (leases aside). */
async function snapshot(j: JournalStore): Promise<{ inbound: unknown[]; outbound: unknown[]; events: unknown[]; meta: unknown[] }> {
  return {
    inbound: await j.all('SELECT * FROM inbound_parcels ORDER BY mailbox_id, parcel_id'),
    outbound: await j.all('SELECT * FROM outbound_files ORDER BY id'),
    events: await j.all('SELECT * FROM events ORDER BY id'),
    meta: await j.all("SELECT * FROM meta WHERE key <> 'openedAt' ORDER BY key"),
  };
}

describe.skipIf(!server.available)('gridsync journal migrate', () => {
  it('copies a real journal SQLite → PostgreSQL and back, row for row, idempotently both ways, never printing the password', async () => {
    const w = makeDaemonWorld();
    try {
      fs.mkdirSync(w.outbox, { recursive: true });
      fs.writeFileSync(path.join(w.outbox, 'a.x12'), 'ISA*00*          *00*          *ZZ*A*ZZ*B*~');
      const once = runCli(['once', '-c', w.configFile]);
      expect(once.status, once.stderr).not.toBe(2);
      const base = await server.createDatabase('migrate_a');
      const url = base.replace('postgres@', `postgres:${SECRET}@`);
      const urlFile = path.join(w.dir, 'journal-url');
      fs.writeFileSync(urlFile, url, { mode: 0o600 });

      const first = runCli(['journal', 'migrate', '--to-file', urlFile, '-c', w.configFile]);
      expect(first.status, first.stderr).toBe(0);
      expect(first.stdout).toMatch(/inbound_parcels +\d+ rows/);
      expect(first.stdout + first.stderr).not.toContain(SECRET);
      const second = runCli(['journal', 'migrate', '--to-file', urlFile, '-c', w.configFile]);
      expect(second.status, second.stderr).toBe(0);
      expect(second.stdout).toBe(first.stdout);

      const sqlite = Journal.open(path.join(w.state, 'journal.sqlite'), { readonly: true });
      const pgj = await PgJournal.open(url, 'test', { owner: 'test', migrate: false });
      try {
        const want = await snapshot(sqlite);
        expect(want.events.length).toBeGreaterThan(0);
        expect(want.outbound.length + want.inbound.length).toBeGreaterThan(0);
        expect(await snapshot(pgj)).toEqual(want);
        // A claim after the copy gets a fresh id (the identity moved past the copied ones).
        const next = await pgj.get<{ id: number }>("SELECT nextval(pg_get_serial_sequence('outbound_files', 'id')) AS id");
        expect(next?.id).toBeGreaterThan(Math.max(0, ...want.outbound.map((r) => (r as { id: number }).id)));

        // …and back, with the PostgreSQL journal as the configured one.
        const back = path.join(w.dir, 'back.sqlite');
        const r = runCli(['journal', 'migrate', '--to', back, '-c', w.configFile], { GRIDSYNC_JOURNAL_URL: url });
        expect(r.status, r.stderr).toBe(0);
        expect(r.stdout + r.stderr).not.toContain(SECRET);
        const again = runCli(['journal', 'migrate', '--to', back, '-c', w.configFile], { GRIDSYNC_JOURNAL_URL: url });
        expect(again.status, again.stderr).toBe(0);
        expect(again.stdout).toBe(r.stdout);
        const returned = Journal.open(back, { readonly: true });
        try {
          expect(await snapshot(returned)).toEqual(want);
        } finally {
          await returned.close();
        }
      } finally {
        await sqlite.close();
        await pgj.close();
      }
    } finally {
      w.cleanup();
    }
  });

  it('refuses beside a running daemon (SQLite lock) and beside a live lease (PostgreSQL)', async () => {
    const w = makeDaemonWorld();
    const url = await server.createDatabase('migrate_b');
    try {
      const daemon = startCli(['run', '-c', w.configFile], { GRIDSYNC_LOG_LEVEL: 'info' });
      try {
        await daemon.waitFor(/"msg":"gridsync started"/);
        const r = runCli(['journal', 'migrate', '--to', url, '-c', w.configFile]);
        expect(r.status).toBe(2);
        expect(r.stderr).toMatch(/JOURNAL_LOCKED/);
      } finally {
        daemon.kill('SIGTERM');
        await daemon.exited;
      }
      const holder = await PgJournal.open(url, 'test', { owner: 'host-a' });
      try {
        await holder.leases.acquire(1001, 60_000);
        const back = runCli(['journal', 'migrate', '--to', path.join(w.dir, 'x.sqlite'), '-c', w.configFile], {
          GRIDSYNC_JOURNAL_URL: url,
        });
        expect(back.status).toBe(2);
        expect(back.stderr).toMatch(/host-a.*JOURNAL_IN_USE/);
        const into = runCli(['journal', 'migrate', '--to', url, '-c', w.configFile]);
        expect(into.status).toBe(2);
        expect(into.stderr).toMatch(/JOURNAL_IN_USE/);
      } finally {
        await holder.close();
      }
    } finally {
      w.cleanup();
    }
  });

  it('once runs on a PostgreSQL journal under the mailbox lease, never printing its password', async () => {
    const w = makeDaemonWorld({ log: { level: 'info', pretty: false } });
    try {
      fs.mkdirSync(w.outbox, { recursive: true });
      fs.writeFileSync(path.join(w.outbox, 'a.x12'), 'ISA*00*          *00*          *ZZ*A*ZZ*B*~');
      const url = (await server.createDatabase('migrate_d')).replace('postgres@', `postgres:${SECRET}@`);
      const r = runCli(['once', '-c', w.configFile], { GRIDSYNC_JOURNAL_URL: url, GRIDSYNC_INSTANCE_NAME: 'once-host' });
      expect(r.status, r.stderr).not.toBe(2);
      expect(r.stdout + r.stderr).toMatch(/mailbox lease taken/);
      expect(r.stdout + r.stderr).not.toContain(SECRET);
      const pgj = await PgJournal.open(url, 'test', { owner: 'test', migrate: false });
      try {
        expect(await pgj.all('SELECT * FROM outbound_files')).toHaveLength(1);
        // Handed back at the end: expired at once, so another instance need not wait.
        const leases = await pgj.leases.list();
        expect(leases.map((l) => [l.owner, l.live])).toEqual([['once-host', false]]);
      } finally {
        await pgj.close();
      }
    } finally {
      w.cleanup();
    }
  });

  it('both backends refuse a journal whose schema is newer than this build knows', async () => {
    const w = makeDaemonWorld();
    try {
      const file = path.join(w.state, 'journal.sqlite');
      const j = Journal.open(file);
      j.db.pragma('user_version = 99');
      await j.close();
      expect(() => Journal.open(file)).toThrow(expect.objectContaining({ code: 'JOURNAL_SCHEMA_TOO_NEW' }));
      const url = await server.createDatabase('migrate_c');
      await (await PgJournal.open(url, 'test', { owner: 'x' })).close();
      await server.admin(`SELECT 1`);
      const pg = await PgJournal.open(url, 'test', { owner: 'x', migrate: false });
      await pg.maintain("INSERT INTO schema_migrations (version, description) VALUES (99, 'future')");
      await pg.close();
      await expect(PgJournal.open(url, 'test', { owner: 'x' })).rejects.toMatchObject({ code: 'JOURNAL_SCHEMA_TOO_NEW' });
    } finally {
      w.cleanup();
    }
  });
});
