// The staging folder holds each parcel before it is linked into the inbox: whoever can write there
// can swap a staged file for content of their own. processing/ was kept 0700 whatever the umask;
// staging was made with the umask's mode (0777 under umask 000, group-writable under 002), also
// when `inbox.stagingDir` puts it outside the 0700 stateDir. The built CLI, run under umask 000.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { makeDaemonWorld, seedEmbeddedService, type DaemonWorld } from '../../helpers/daemon-config.js';
import { cliPath } from '../../helpers/daemon-child.js';

const worlds: DaemonWorld[] = [];
afterEach(() => worlds.splice(0).forEach((w) => w.cleanup()));

/** `gridsync once` as a child whose umask is 000, as a careless service manager might leave it. */
function onceUnderUmask000(config: string): { status: number | null; stderr: string } {
  const r = spawnSync('sh', ['-c', 'umask 000 && exec "$0" "$@"', process.execPath, cliPath, 'once', '-c', config, '--quiet'], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: r.status, stderr: r.stderr };
}

describe("the staging folder is gridsync's alone", () => {
  it.each([
    ['created by gridsync', false],
    ['found open to everyone (0777)', true],
  ])('inbox.stagingDir outside stateDir, %s: 0700 after a run, and the parcel is delivered', async (_, preexisting) => {
    const w = makeDaemonWorld();
    worlds.push(w);
    await seedEmbeddedService(w, [{ fileName: 'order.edi', content: 'UNA:+.? ' }]);
    const staging = path.join(w.dir, 'staging');
    const c = YAML.parse(fs.readFileSync(w.configFile, 'utf8')) as { mailboxes: { inbox: Record<string, unknown> }[] };
    (c.mailboxes[0] as { inbox: Record<string, unknown> }).inbox.stagingDir = staging;
    fs.writeFileSync(w.configFile, YAML.stringify(c), { mode: 0o600 });
    if (preexisting) {
      fs.mkdirSync(staging);
      fs.chmodSync(staging, 0o777);
    }
    const r = onceUnderUmask000(w.configFile);
    expect(r.status, r.stderr).toBe(0);
    expect(fs.readFileSync(path.join(w.inbox, 'order.edi'), 'utf8')).toBe('UNA:+.? ');
    expect((fs.statSync(staging).mode & 0o777).toString(8)).toBe('700');
  });
});
