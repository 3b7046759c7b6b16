/**
 * A lookup of a partner's name (`{partner}` in the inbox's name template) that the service holds,
 * while `gridsync run` loses the mailbox's lease (another instance takes it over: here a DBA's
 * UPDATE of the lease row). The parcels waiting on the lookup stop waiting with the lease; the
 * lookup itself went on with nobody waiting, to its deadline (5 s), then logged that the service
 * did not answer in time and cached that failure for the partner. Now a lookup nobody waits on any
 * more is given up at once, and tells and caches nothing. Built CLI, real PostgreSQL, the emulator
 * behind a proxy that holds the lookup.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmulator } from '@gridsync/emulator';
import { eventually, startCli } from '../../helpers/daemon-child.js';
import { startHungProxy } from '../../helpers/hung-proxy.js';
import { postgresForFile, queryIn } from '../../helpers/postgres.js';

const server = postgresForFile('a partner lookup under a lost lease is not tested');
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe.skipIf(!server.available)('a partner-name lookup when the lease is lost', () => {
  it('is given up as soon as no parcel waits on it: no deadline waited out, no failure told or cached', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-lease-partner-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const url = await server.createDatabase('lease_partner_lookup');
    const emu = await startEmulator({ port: 0 });
    cleanups.push(() => emu.close());
    const proxy = await startHungProxy(emu.url);
    cleanups.push(() => proxy.close());
    proxy.rule = (name) => (name.startsWith('GET /v2/ids/') ? 'silent' : undefined);
    await emu.inject({ mailboxId: 1001, fileName: 'order.x12', content: Buffer.from('ISA*1~'), gridIdFrom: 5005 });
    fs.mkdirSync(path.join(dir, 'inbox'));
    const configFile = path.join(dir, 'gridsync.yaml');
    fs.writeFileSync(
      configFile,
      YAML.stringify({
        // The lookup's deadline is the smaller of 5 s and callMs.
        api: { baseUrl: proxy.url, apiKey: 'demo-key-1001', timeouts: { callMs: '30s' } },
        stateDir: 'state',
        log: { level: 'info', pretty: false },
        schedule: { poll: '1h' },
        journal: { lease: '4s', renew: '500ms' },
        instance: { name: 'host-a' },
        mailboxes: [{ mailboxId: 1001, inbox: { dir: 'inbox', nameTemplate: '{partner}/{fileName}' } }],
      }),
      { mode: 0o600 },
    );
    const child = startCli(['run', '-c', configFile], { GRIDSYNC_JOURNAL_URL: url }, dir);
    cleanups.push(() => child.kill('SIGKILL'));
    await eventually(() => proxy.held.length > 0, 20_000, 'the lookup held by the service');

    // Another instance takes the mailbox over.
    await queryIn(url, "UPDATE lease SET owner = 'host-b', token = token + 1, expires_at = clock_timestamp() + interval '1 hour'");
    await eventually(() => /mailbox lease lost/.test(child.output()), 10_000, 'the lease lost');
    const lostAt = Date.now();
    const lookup = proxy.held[0];
    await eventually(() => lookup?.closedAt !== undefined, 10_000, 'the lookup closed');
    // Before, it stayed open to its deadline, 5 s after it started.
    expect((lookup?.closedAt ?? Infinity) - lostAt, 'lease lost to lookup closed (ms)').toBeLessThan(2_500);
    // Past that deadline: nothing about the lookup was told (before: a warning that the service did not answer in time).
    await new Promise((r) => setTimeout(r, Math.max(0, (lookup?.at ?? 0) + 6_000 - Date.now())));
    expect(child.output()).not.toMatch(/no answer about the partner/);
    expect(fs.readdirSync(path.join(dir, 'inbox'))).toEqual([]);

    // The mailbox back (the other instance gone), the service answering: the partner is asked
    // again (before: the failure cached, its parcel placed under the grid id without asking).
    proxy.rule = () => undefined;
    await queryIn(url, "UPDATE lease SET owner = 'host-b', expires_at = clock_timestamp()");
    await eventually(() => fs.readdirSync(path.join(dir, 'inbox')).length > 0, 20_000, 'the parcel placed');
    expect(proxy.seen.filter((n) => n.startsWith('GET /v2/ids/'))).toHaveLength(2);
  }, 60_000);
});
