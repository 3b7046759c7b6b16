/**
 * A PostgreSQL connection the server ends (a restart, pg_terminate_backend) never crashes the
 * process, whatever state it is in — also checked out of the pool with no query running, where the
 * driver reports the server's message as an 'error' event on the client: without a listener that
 * event throws. (A PostgreSQL restart in the chaos test once killed an instance that way.) The pool
 * the journal opens runs in a child process; the test ends each of its connections from outside.
 */
import { describe, expect, it } from 'vitest';
import { distUrl, runModuleChild } from '../../helpers/journal-child.js';
import { postgresForFile } from '../../helpers/postgres.js';

const server = postgresForFile('terminated connections are not tested');

describe.skipIf(!server.available)('a connection the server ends', () => {
  it('checked out with no query running, or idle in the pool: the process lives on, and the next query gets a new connection', async () => {
    const url = await server.createDatabase('terminated');
    const child = runModuleChild(`
      const { openPool } = await import(${JSON.stringify(distUrl('journal/postgres-connection.js'))});
      const pool = await openPool(${JSON.stringify(url)});
      const held = await pool.connect();
      const idle = await pool.connect();
      idle.release();
      await held.query('SELECT 1');
      console.log('ready');
      // The test ends both connections now; the process must still be here a while later.
      await new Promise((r) => setTimeout(r, 3000));
      held.release();
      console.log('after ' + (await pool.query('SELECT 1 AS one')).rows[0].one);
      await pool.end();
    `);
    await child.waitFor(/ready/);
    // Every connection of the pool ends: the one checked out (no query running) and the pooled one.
    const ended = await server.admin<{ ok: boolean }>(
      "SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE datname = 'terminated' AND pid <> pg_backend_pid()",
    );
    expect(ended.length).toBe(2);
    const r = await child.exited;
    expect(r.stderr).not.toMatch(/Unhandled 'error' event/);
    expect({ code: r.code, stdout: r.stdout.trim() }).toEqual({ code: 0, stdout: 'ready\nafter 1' });
  });
});
