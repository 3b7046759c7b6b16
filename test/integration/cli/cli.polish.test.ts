// What an operator reads from the CLI: a usage line (not node's parser text) for a bad option, a
// start-up refusal said once (it was logged and printed), and doctor naming the secret source
// that won and warning when it runs as root (its folder and key checks then answer for root).
import fs from 'node:fs';
import YAML from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { makeDaemonWorld, type DaemonWorld } from '../../helpers/daemon-config.js';
import { runCli } from '../../helpers/daemon-child.js';

const worlds: DaemonWorld[] = [];
afterEach(() => worlds.splice(0).forEach((w) => w.cleanup()));

function world(change: (c: Record<string, unknown>) => void = () => undefined): DaemonWorld {
  const w = makeDaemonWorld();
  worlds.push(w);
  const c = YAML.parse(fs.readFileSync(w.configFile, 'utf8')) as Record<string, unknown>;
  change(c);
  fs.writeFileSync(w.configFile, YAML.stringify(c), { mode: 0o600 });
  return w;
}

describe('CLI polish', () => {
  it('an unknown option or a missing value: one line saying so, the usage line, where to read more', () => {
    const r = runCli(['once', '--frob']);
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(
      'gridsync: unknown option --frob\nusage: gridsync once [-c FILE] [--dry-run [--json]] [--log-level L] [--quiet]\n(gridsync once --help for more)\n',
    );
    const v = runCli(['status', '--log-level']);
    expect(v.stderr.split('\n').slice(0, 2)).toEqual([
      'gridsync: option --log-level needs a value',
      'usage: gridsync status [-c FILE] [--json]',
    ]);
    expect(runCli(['requeue', '--all=yes']).stderr).toMatch(/^gridsync: option --all takes no value\n/);
  });

  it('a start-up refusal is said once, with its code', () => {
    const w = world((c) => (c.createDirs = false));
    const r = runCli(['once', '-c', w.configFile]);
    expect(r.status).toBe(2);
    const said = (r.stdout + r.stderr).match(/an unmounted share\?/g) ?? [];
    expect(said).toHaveLength(1);
    expect(r.stderr).toMatch(/\[STARTUP_FOLDERS\]/);
  });

  it('doctor names the secret source that won, and warns when run as root', () => {
    const w = world();
    const r = runCli(['doctor', '-c', w.configFile], { GRIDSYNC_API_KEY: 'demo-key-1001' });
    expect(r.stdout).toContain('✓ secret from the environment (GRIDSYNC_API_KEY)');
    expect(runCli(['doctor', '-c', w.configFile]).stdout).toContain('✓ secret from api.apiKey in the config');
    if (process.geteuid?.() === 0) expect(r.stdout).toMatch(/^! running as root: .*run doctor as that user/m);
    else expect(r.stdout).not.toMatch(/running as root/);
  });
});
