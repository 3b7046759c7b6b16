// The daemon commands as operators and schedulers run them: built CLI in child processes, exit
// codes of docs/errors.md (0 ok · 1 some item failed · 2 config/auth/usage), --help and --version.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { makeDaemonWorld, type DaemonWorld } from '../../helpers/daemon-config.js';
import { cliPath, runCli, startCli } from '../../helpers/daemon-child.js';
import { x12 } from '../../helpers/edi.js';
import { prerequisite, runs } from '../../helpers/require-tool.js';

const worlds: DaemonWorld[] = [];
const world = (extra: Record<string, unknown> = {}, mailboxExtra: Record<string, unknown> = {}): DaemonWorld => {
  const w = makeDaemonWorld(extra, mailboxExtra);
  worlds.push(w);
  return w;
};
afterEach(() => worlds.splice(0).forEach((w) => w.cleanup()));

const edit = (w: DaemonWorld, fn: (c: any) => void): void => {
  const c = YAML.parse(fs.readFileSync(w.configFile, 'utf8'));
  fn(c);
  fs.writeFileSync(w.configFile, YAML.stringify(c));
};

describe('--help and --version on every daemon command', () => {
  it.each(['run', 'once', 'status', 'doctor'])('%s', (cmd) => {
    const help = runCli([cmd, '--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(new RegExp(`^usage: gridsync ${cmd}`));
    const version = runCli([cmd, '--version']);
    expect(version.status).toBe(0);
    expect(version.stdout).toMatch(/^gridsync \d+\.\d+\.\d+/);
    const bad = runCli([cmd, '--no-such-option']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/no-such-option/);
  });
});

describe('config errors: exit 2 with the key named', () => {
  it.each(['run', 'once', 'status', 'doctor'])('%s with a bad duration', (cmd) => {
    const w = world();
    edit(w, (c) => (c.mailboxes[0].outbox.stableMs = 'soonish'));
    const r = runCli([cmd, '-c', w.configFile]);
    expect(r.status).toBe(2);
    expect(r.stdout + r.stderr).toMatch(/mailboxes\[0\]\.outbox\.stableMs: expected a duration/);
  });

  it('a missing config file, and plain http to a remote host', () => {
    const w = world();
    const missing = runCli(['once', '-c', path.join(w.dir, 'nope.yaml')]);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/nope\.yaml does not exist/);
    edit(w, (c) => (c.api = { baseUrl: 'http://192.0.2.10:8080', apiKey: 'x' }));
    const insecure = runCli(['once', '-c', w.configFile]);
    expect(insecure.status).toBe(2);
    expect(insecure.stderr).toMatch(/api\.baseUrl: plain http/);
  });

  it('rejected credentials: once and run exit 2 with one clear line', () => {
    const w = world();
    edit(w, (c) => (c.api.apiKey = 'wrong-key'));
    const once = runCli(['once', '-c', w.configFile]);
    expect(once.status).toBe(2);
    expect(once.stderr).toMatch(/credentials rejected/);
    const run = runCli(['run', '-c', w.configFile]);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/credentials rejected/);
  });
});

describe('once', () => {
  it('sends what is in the outbox and exits 0; a file the service cannot take exits 1', () => {
    const w = world();
    fs.mkdirSync(w.outbox, { recursive: true });
    fs.writeFileSync(path.join(w.outbox, 'a.x12'), x12(101));
    const good = runCli(['once', '-c', w.configFile]);
    expect(good.stderr).toBe('');
    expect(good.status).toBe(0);
    expect(fs.readdirSync(w.sent)).toEqual(['a.x12']);

    fs.writeFileSync(path.join(w.outbox, 'b.x12'), 'this is not an interchange');
    const bad = runCli(['once', '-c', w.configFile]);
    expect(bad.status).toBe(1);
    expect(fs.readdirSync(w.error).sort()).toEqual(['b.x12', 'b.x12.error.json']);
  });

  const hasScript = prerequisite('script (util-linux)', runs('script', '--version'), 'progress on a terminal is not checked');
  it.skipIf(!hasScript)('on a terminal (a pty from script(1)): progress and a summary on stderr', () => {
    const w = world();
    fs.mkdirSync(w.outbox, { recursive: true });
    fs.writeFileSync(path.join(w.outbox, 'tty.x12'), x12(303));
    const cmd = `${process.execPath} ${cliPath} once -c ${w.configFile}`;
    const r = spawnSync('script', ['-qec', cmd, '/dev/null'], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/mailbox +dir +done +failed +deferred +bytes +time +rate/);
    expect(r.stdout).toMatch(/mb1001 +out +1 +0 +0 +\d/);
  });

  it('exits 2 while a daemon holds the journal; status and doctor still work', async () => {
    const w = world();
    const daemon = startCli(['run', '-c', w.configFile], { GRIDSYNC_LOG_LEVEL: 'info' });
    try {
      await daemon.waitFor(/"msg":"gridsync started"/);
      const r = runCli(['once', '-c', w.configFile]);
      expect(r.status).toBe(2);
      expect(r.stderr).toMatch(/in use by another gridsync process/);
      // status and doctor read beside the running daemon
      const status = runCli(['status', '-c', w.configFile, '--json']);
      expect(status.status).toBe(0);
      expect(JSON.parse(status.stdout)).toHaveProperty('inbound.counts');
      const doctor = runCli(['doctor', '-c', w.configFile]);
      expect(doctor.stdout).toMatch(/! journal .*in use by a running gridsync/);
      expect(doctor.status).toBe(0);
    } finally {
      daemon.kill('SIGTERM');
      expect((await daemon.exited).code).toBe(0);
    }
  });
});

describe('status and doctor', () => {
  it('status: table and --json after a cycle; exit 2 before any run', () => {
    const w = world();
    const before = runCli(['status', '-c', w.configFile]);
    expect(before.status).toBe(2);
    expect(before.stderr).toMatch(/no journal at .*journal\.sqlite yet: gridsync has not run with this config/);
    fs.mkdirSync(w.outbox, { recursive: true });
    fs.writeFileSync(path.join(w.outbox, 'a.x12'), x12(202));
    fs.writeFileSync(path.join(w.outbox, 'bad.x12'), 'garbage');
    expect(runCli(['once', '-c', w.configFile]).status).toBe(1);
    const table = runCli(['status', '-c', w.configFile]);
    expect(table.status).toBe(0);
    expect(table.stdout).toMatch(/outbound files/);
    expect(table.stdout).toMatch(/recent failures[\s\S]*bad\.x12/);
    const json = runCli(['status', '-c', w.configFile, '--json']);
    const report = JSON.parse(json.stdout) as {
      outbound: { counts: Record<string, number>; recentFailures: { file: string }[] };
      lastCycle: { at: string };
    };
    expect(Object.values(report.outbound.counts).reduce((a, b) => a + b, 0)).toBe(2);
    expect(report.outbound.recentFailures.map((f) => f.file)).toEqual(['bad.x12']);
    expect(Date.parse(report.lastCycle.at)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('status on a damaged journal says it is damaged and what to do, not "has gridsync run yet?"', () => {
    const w = world();
    fs.mkdirSync(path.join(w.dir, 'state'), { recursive: true });
    fs.writeFileSync(path.join(w.dir, 'state', 'journal.sqlite'), 'SQLite format 3\0'.padEnd(4096, 'x'));
    const r = runCli(['status', '-c', w.configFile]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/journal .*journal\.sqlite is damaged/);
    expect(r.stderr).toContain('When the journal is damaged');
    expect(r.stderr).not.toMatch(/has not run|run yet/);
  });

  it('doctor: all pass on a fresh config (folders to be created are notes); an unwritable folder fails with exit 2', () => {
    const w = world();
    const fresh = runCli(['doctor', '-c', w.configFile]);
    expect(fresh.stdout).not.toMatch(/✗/);
    expect(fresh.stdout).toMatch(/! .*inbox .*does not exist yet/);
    expect(fresh.stdout).toMatch(/✓ service: embedded/);
    expect(fresh.status).toBe(0);
    expect(fs.existsSync(w.inbox)).toBe(false); // doctor changes nothing

    if (process.getuid?.() === 0) return; // root writes anywhere: the failing half needs a normal user
    fs.mkdirSync(w.inbox, { recursive: true });
    fs.chmodSync(w.inbox, 0o500);
    try {
      const r = runCli(['doctor', '-c', w.configFile]);
      expect(r.status).toBe(2);
      expect(r.stdout).toMatch(new RegExp(`✗ .*inbox ${w.inbox.replace(/[/.]/g, '\\$&')}`));
    } finally {
      fs.chmodSync(w.inbox, 0o700);
    }
  });

  it('doctor against a service that is not there fails the service line', () => {
    const w = world();
    edit(w, (c) => (c.api = { baseUrl: 'http://127.0.0.1:9', apiKey: 'k', timeouts: { connectMs: '1s' } }));
    const r = runCli(['doctor', '-c', w.configFile]);
    expect(r.status).toBe(2);
    expect(r.stdout).toMatch(/✗ service http:\/\/127\.0\.0\.1:9: /);
    expect(r.stdout).toMatch(/✗ credentials: not checked/);
  });
});
