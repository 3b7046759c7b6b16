/**
 * Operating several instances from the outside (the built CLI in child processes, a real
 * PostgreSQL started by the test): `gridsync status` shows who holds each mailbox, with which
 * token, until when — PostgreSQL and SQLite; `gridsync doctor` checks the database (reachable,
 * schema version, clock skew, synchronous replication). The database password never shows.
 */
import { describe, expect, it } from 'vitest';
import { PgJournal } from '../../../src/journal/index.js';
import { makeDaemonWorld } from '../../helpers/daemon-config.js';
import { runCli, startCli } from '../../helpers/daemon-child.js';
import { postgresForFile } from '../../helpers/postgres.js';

const server = postgresForFile('status and doctor on a PostgreSQL journal are not tested');
const SECRET = 'l3ase-s3cret';

interface StatusJson {
  mailboxes: { mailboxId: number; lease: { owner: string | null; token: number | null; expiresAt: string | null; live: boolean } }[];
}

describe.skipIf(!server.available)('leases in status, the database in doctor', () => {
  it('status on PostgreSQL: the owner, token and expiry of each mailbox, after a takeover and after a hand-back', async () => {
    const w = makeDaemonWorld();
    const url = (await server.createDatabase('status_pg')).replace('postgres@', `postgres:${SECRET}@`);
    const env = { GRIDSYNC_JOURNAL_URL: url };
    const a = await PgJournal.open(url, 'test', { owner: 'host-a' });
    const b = await PgJournal.open(url, 'test', { owner: 'host-b' });
    try {
      const first = (await a.leases.acquire(1001, 1))?.token ?? Infinity;
      await new Promise((r) => setTimeout(r, 20));
      const taken = await b.leases.acquire(1001, 60_000);
      expect(taken?.token).toBeGreaterThan(first);

      const json = runCli(['status', '--json', '-c', w.configFile], env);
      expect(json.status, json.stderr).toBe(0);
      const lease = (JSON.parse(json.stdout) as StatusJson).mailboxes.find((m) => m.mailboxId === 1001)?.lease;
      expect(lease).toEqual({ owner: 'host-b', token: taken?.token, expiresAt: taken?.expiresAt.toISOString(), live: true });
      const text = runCli(['status', '-c', w.configFile], env);
      expect(text.stdout).toMatch(new RegExp(`1001\\s+host-b\\s+${taken?.token}\\s+\\d{4}-\\d\\d-\\d\\dT`));
      expect(text.stdout + text.stderr + json.stdout + json.stderr).not.toContain(SECRET);

      await b.leases.release(taken as NonNullable<typeof taken>);
      const after = runCli(['status', '-c', w.configFile], env);
      expect(after.stdout).toMatch(new RegExp(`1001\\s+host-b\\s+${taken?.token}\\s+\\S+ \\(expired: free to take over\\)`));
    } finally {
      await a.close();
      await b.close();
      w.cleanup();
    }
  });

  it('status on SQLite: every mailbox is held by the running daemon, and by nobody once it stopped', async () => {
    const w = makeDaemonWorld();
    try {
      const daemon = startCli(['run', '-c', w.configFile], { GRIDSYNC_LOG_LEVEL: 'info' });
      try {
        await daemon.waitFor(/"msg":"gridsync started"/);
        const r = runCli(['status', '--json', '-c', w.configFile]);
        expect(r.status, r.stderr).toBe(0);
        const lease = (JSON.parse(r.stdout) as StatusJson).mailboxes[0]?.lease;
        expect(lease).toMatchObject({ owner: `the running daemon (pid ${daemon.pid})`, live: true });
      } finally {
        daemon.kill('SIGTERM');
        await daemon.exited;
      }
      const r = runCli(['status', '-c', w.configFile]);
      expect(r.stdout).toMatch(/1001\s+nobody\s+-\s+-/);
    } finally {
      w.cleanup();
    }
  });

  it('doctor on PostgreSQL: reachable, schema current, clock skew, replication — and a synchronous standby that is missing fails', async () => {
    const w = makeDaemonWorld();
    const url = (await server.createDatabase('doctor_pg')).replace('postgres@', `postgres:${SECRET}@`);
    const env = { GRIDSYNC_JOURNAL_URL: url };
    try {
      const empty = runCli(['doctor', '-c', w.configFile], env);
      expect(empty.stdout).toMatch(/✓ journal postgres:\/\/postgres:\*+@127\.0\.0\.1:\d+\/doctor_pg reachable: PostgreSQL \d+/);
      expect(empty.stdout).toMatch(/! journal schema: empty/);

      await (await PgJournal.open(url, 'test', { owner: 'migrator' })).close();
      const r = runCli(['doctor', '-c', w.configFile], env);
      expect(r.status, r.stdout + r.stderr).toBe(0);
      expect(r.stdout).toMatch(/✓ journal schema: version \d+/);
      expect(r.stdout).toMatch(/✓ clock skew between this host and the database: database clock [+-]\d+ ms/);
      expect(r.stdout).toMatch(/! journal replication: no synchronous standby/);

      await server.admin("ALTER SYSTEM SET synchronous_standby_names = 'standby_b'");
      await server.admin('SELECT pg_reload_conf()');
      try {
        const sync = runCli(['doctor', '-c', w.configFile], env);
        expect(sync.status).toBe(2);
        expect(sync.stdout).toMatch(/✗ journal replication: synchronous_standby_names is 'standby_b' but no standby is connected/);
      } finally {
        await server.admin('ALTER SYSTEM RESET synchronous_standby_names');
        await server.admin('SELECT pg_reload_conf()');
      }

      const down = runCli(['doctor', '-c', w.configFile], { GRIDSYNC_JOURNAL_URL: url.replace(/:(\d+)\//, ':1/') });
      expect(down.status).toBe(2);
      expect(down.stdout).toMatch(/✗ journal postgres:\/\/postgres:\*+@127\.0\.0\.1:1\/doctor_pg reachable: /);
      for (const out of [empty, r, down]) expect(out.stdout + out.stderr).not.toContain(SECRET);
    } finally {
      w.cleanup();
    }
  });
});
