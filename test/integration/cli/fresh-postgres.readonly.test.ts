/**
 * The read-only commands on a PostgreSQL database gridsync has never run on (the built CLI, a real
 * PostgreSQL started by the test): as on SQLite before the first run, `once --dry-run` shows what a
 * first cycle would do and `status` says that nothing has run yet — neither fails on tables that
 * are not there, and neither creates them.
 */
import { describe, expect, it } from 'vitest';
import { PgJournal } from '../../../src/journal/index.js';
import { makeDaemonWorld } from '../../helpers/daemon-config.js';
import { runCli } from '../../helpers/daemon-child.js';
import { postgresForFile } from '../../helpers/postgres.js';

const server = postgresForFile('the read-only commands on an empty PostgreSQL journal are not tested');

describe.skipIf(!server.available)('read-only commands on a PostgreSQL journal not set up yet', () => {
  it('once --dry-run lists the work, status says nothing ran yet; the database stays empty', async () => {
    const w = makeDaemonWorld();
    const url = await server.createDatabase('fresh_readonly');
    const env = { GRIDSYNC_JOURNAL_URL: url };
    try {
      const dry = runCli(['once', '--dry-run', '-c', w.configFile], env);
      expect(dry.stderr).not.toMatch(/does not exist|JOURNAL_UNAVAILABLE/);
      expect(dry.status, dry.stderr).toBe(0);
      expect(dry.stdout).toMatch(/would/i);

      const status = runCli(['status', '-c', w.configFile], env);
      expect(status.stderr).not.toMatch(/does not exist/);
      expect(status.stderr).toMatch(/has not run/);
      expect(status.status).toBe(2);

      const probe = await PgJournal.open(url, 'test', { owner: 'probe', migrate: false });
      try {
        expect(await probe.schemaVersion()).toBe(0);
      } finally {
        await probe.close();
      }
    } finally {
      w.cleanup();
    }
  });
});
