// Callbacks with api.protocol: soap (issue 23): SOAP publishes no callback operations, so a
// SOAP-configured daemon registers over REST with the same account (the API key is valid on both).
// A real daemon moving parcels over SOAP registers, takes the emulator's calls and fetches the
// announced parcel long before the 10-minute poll; `gridsync callbacks` works on the same config.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventually, runCli } from '../../helpers/daemon-child.js';
import { freePort, inboxFiles, metric, startDaemon, callbackWorldForFile } from '../../helpers/callbacks-world.js';

const w = callbackWorldForFile();

interface Entry {
  callbackId: number;
  url: string;
}

async function ours(secret: string): Promise<Entry[]> {
  const r = await w.emu('POST', '/v2/callbacks/queue-list', { mailboxId: 1001, recordsPerPage: 500 });
  return (r.data as { queueEntries: Entry[] }).queueEntries.filter((e) => e.url.endsWith(`/1001/${secret}`));
}

describe('callbacks: api.protocol soap', () => {
  it('registers over REST with the same account and takes calls; parcels still move over SOAP', async () => {
    const port = await freePort();
    const d = await startDaemon(w, 'soap', { poll: '10m', protocol: 'soap', callbacks: { port, auth: 'digest' } });
    try {
      const secret = (
        JSON.parse(fs.readFileSync(path.join(w.dir, 'soap', 'state', 'callbacks.json'), 'utf8')) as { paths: Record<string, string> }
      ).paths['1001'] as string;
      expect(await ours(secret)).toHaveLength(1);
      await eventually(async () => (await metric(d, 'gridsync_last_success_timestamp_seconds{mailbox="mb1001"}')) > 0);
      await w.inject('over-soap.x12', 'ISA*soap~');
      await eventually(() => inboxFiles(d).includes('over-soap.x12'), 15_000, 'the callback-triggered arrival');
      expect(await metric(d, 'gridsync_callbacks_received_total{mailbox="mb1001"}')).toBeGreaterThanOrEqual(1);
      // The parcels went over SOAP: REST saw the registration calls only.
      const log = (await w.emu('GET', '/_emulator/requests')).data as { path: string }[];
      const restPaths = log.map((r) => r.path).filter((p) => p.startsWith('/v2/') && !p.startsWith('/v2/auth/'));
      expect(restPaths.length).toBeGreaterThan(0);
      expect(restPaths.filter((p) => !p.startsWith('/v2/callbacks/'))).toEqual([]);
    } finally {
      await d.stop();
    }
    // The commands on the same SOAP config: the daemon's registration is found and kept.
    const file = path.join(w.dir, 'soap', 'gridsync.yaml');
    const register = runCli(['callbacks', 'register', '-c', file]);
    expect(register.stderr).toBe('');
    expect(register.stdout).toMatch(/^mailbox 1001: callback \d+ kept$/m);
    const test = runCli(['callbacks', 'test', '-c', file]);
    expect(test.stdout).toMatch(/^mailbox 1001: callback \d+: the call arrived and was verified$/m);
    // callbacks.restUrl is where the registration goes: nothing listens there, so the mailbox fails.
    const elsewhere = runCli(['callbacks', 'list', '-c', file], { GRIDSYNC_CALLBACKS_REST_URL: `http://127.0.0.1:${await freePort()}` });
    expect(elsewhere.status).toBe(1);
    expect(elsewhere.stderr).toMatch(/^mailbox 1001: /m);
    // One the client refuses (clear text to another host) is a config error, for the command and for run.
    const clear = { GRIDSYNC_CALLBACKS_REST_URL: 'http://grid.example.com' };
    const refused = runCli(['callbacks', 'list', '-c', file], clear);
    expect([refused.status, refused.stderr]).toEqual([2, expect.stringMatching(/plain http:\/\/ to grid\.example\.com is refused/)]);
    const run = runCli(['run', '-c', file], clear);
    expect([run.status, run.stderr]).toEqual([2, expect.stringMatching(/^gridsync: callbacks: plain http:.*\[STARTUP_CONFIG\]$/m)]);
  }, 120_000);
});
