// `once` used to exit 0 when every parcel was downloaded and then deferred because the inbox could
// not take it: a scheduler saw success while nothing was delivered. Now it exits 1 and says why.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeDaemonWorld, seedEmbeddedService, type DaemonWorld } from '../../helpers/daemon-config.js';
import { runCli } from '../../helpers/daemon-child.js';

const worlds: DaemonWorld[] = [];
afterEach(() => worlds.splice(0).forEach((w) => w.cleanup()));

describe('once: items left undelivered', () => {
  it('an inbox that cannot take the parcels exits 1 with the reason; exits 0 once it can', async () => {
    const w = makeDaemonWorld({}, { inbox: { dir: './inbox', nameTemplate: 'orders/{fileName}' } });
    worlds.push(w);
    await seedEmbeddedService(w, [{ fileName: 'po-1.x12', content: 'ISA*1~' }]);
    // A file where the template's folder must go: mkdir fails for root as for anyone.
    fs.mkdirSync(w.inbox, { recursive: true });
    fs.writeFileSync(path.join(w.inbox, 'orders'), '');

    const stuck = runCli(['once', '-c', w.configFile]);
    expect(stuck.status).toBe(1);
    expect(stuck.stderr).toMatch(/items left undelivered:\n {2}mb1001 inbound +parcel \d+ \(po-1\.x12\): deferred: .*orders/);
    expect(stuck.stderr).not.toMatch(/\n\s+at /); // no stack trace

    fs.rmSync(path.join(w.inbox, 'orders'));
    const ok = runCli(['once', '-c', w.configFile]);
    expect(ok.stderr).toBe('');
    expect(ok.status).toBe(0);
    expect(fs.readFileSync(path.join(w.inbox, 'orders', 'po-1.x12'), 'utf8')).toBe('ISA*1~');
  });
});
