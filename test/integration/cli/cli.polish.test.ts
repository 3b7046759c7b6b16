// What an operator reads from the CLI: a usage line (not node's parser text) for a bad option, what
// is wrong before the usage for a missing subcommand or argument (the usage alone once left the
// operator to guess), `once --json` refused unless with --dry-run (it once ran real transfers), a
// start-up refusal said once (it was logged and printed), and doctor naming the secret source
// that won and warning when it runs as root (its folder and key checks then answer for root), and
// the config's warnings from the commands that keep no log.
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

  it('a missing or unknown subcommand, a missing argument: the problem first, then the usage, where to read more', () => {
    const cases: [string[], string, string][] = [
      [['callbacks'], 'name an action: list, register, remove or test', 'usage: gridsync callbacks'],
      [['callbacks', 'frob'], 'unknown action frob: list, register, remove or test', 'usage: gridsync callbacks'],
      [['callbacks', 'toString'], 'unknown action toString: list, register, remove or test', 'usage: gridsync callbacks'],
      [['callbacks', 'list', 'extra'], 'unexpected argument extra', 'usage: gridsync callbacks'],
      [['journal'], 'name a subcommand: migrate or set-service', 'usage: gridsync journal'],
      [['journal', 'frob'], 'unknown subcommand frob: migrate or set-service', 'usage: gridsync journal'],
      [['journal', 'migrate', 'extra'], 'unexpected argument extra', 'usage: gridsync journal'],
      [['call', 'GET'], 'name a METHOD and a PATH (or --list)', 'usage: gridsync call'],
      [['call', 'GET', '/v2/users/me', '{}', 'extra'], 'unexpected argument extra', 'usage: gridsync call'],
      [['call', '--soap'], 'name a SOAP operation (or --list)', 'usage: gridsync call'],
    ];
    for (const [args, problem, usage] of cases) {
      const r = runCli(args);
      expect(r.status, args.join(' ')).toBe(2);
      const lines = r.stderr.split('\n');
      expect(lines[0], args.join(' ')).toBe(`gridsync: ${problem}`);
      expect(lines[1], args.join(' ')).toMatch(new RegExp(`^${usage} `));
      expect(lines.at(-2), args.join(' ')).toBe(`(${usage.slice('usage: '.length)} --help for more)`);
    }
  });

  it('no command at all: the usage on stderr with exit 2, as for an unknown one; --help on stdout with 0', () => {
    // It went to stdout with exit 2: a script capturing stdout took the usage for output.
    const none = runCli([]);
    expect(none.status).toBe(2);
    expect(none.stdout).toBe('');
    expect(none.stderr).toMatch(/^gridsync: name a command\n\nusage: gridsync <command> \[options\]\n/);
    const help = runCli(['--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^usage: gridsync <command> \[options\]\n/);
  });

  it('once --json without --dry-run is refused before anything is sent', () => {
    const w = world();
    fs.mkdirSync(w.outbox, { recursive: true });
    fs.copyFileSync('examples/invoice-810.x12', `${w.outbox}/invoice-810.x12`);
    const r = runCli(['once', '--json', '-c', w.configFile]);
    expect(r.stderr.split('\n')[0]).toBe('gridsync: --json goes with --dry-run: a real run reports in its log');
    expect(r.status).toBe(2);
    expect(fs.readdirSync(w.outbox)).toEqual(['invoice-810.x12']);
    expect(fs.existsSync(w.state)).toBe(false);
  });

  it('a start-up refusal is said once, with its code', () => {
    const w = world((c) => (c.createDirs = false));
    const r = runCli(['once', '-c', w.configFile]);
    expect(r.status).toBe(2);
    const said = (r.stdout + r.stderr).match(/an unmounted share\?/g) ?? [];
    expect(said).toHaveLength(1);
    expect(r.stderr).toMatch(/\[STARTUP_FOLDERS\]/);
  });

  it("requeue, redeliver, journal set-service and status refuse a stateDir that is a file as run does, not with mkdir's EEXIST", () => {
    const w = world();
    fs.writeFileSync(w.state, 'not a folder');
    fs.mkdirSync(w.error, { recursive: true });
    fs.writeFileSync(`${w.error}/order.x12`, 'ISA');
    for (const args of [['requeue', '--all'], ['redeliver', '100001'], ['journal', 'set-service'], ['status']]) {
      const r = runCli([...args, '-c', w.configFile]);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(/^gridsync: stateDir .* is not a folder — .*\[STARTUP_FOLDERS\]\n$/);
    }
  });

  it("an operator's command warns of a GRIDSYNC_ variable it does not know, as run logs it and doctor lists it", () => {
    // Misspelt, the journal's URL was ignored without a word: status read the local journal, and
    // redeliver noted its request there, while the daemons used the shared one.
    const w = world();
    const env = { GRIDSYNC_JOURNAL_ULR: 'postgres://db.example/gridsync' };
    const warning =
      'gridsync: warning: GRIDSYNC_JOURNAL_ULR is not a gridsync setting and is ignored (did you mean GRIDSYNC_JOURNAL_URL?)\n';
    for (const args of [['status'], ['requeue', '--all'], ['redeliver', '100001'], ['journal', 'set-service'], ['once', '--dry-run']]) {
      const r = runCli([...args, '-c', w.configFile], env);
      expect(r.stderr.split(warning).length - 1, `${args.join(' ')}: ${r.stderr}`).toBe(1);
    }
  });

  it('the cron line (once --quiet): a clean run prints nothing, so cron mails nothing; a failed item prints what is left', () => {
    // At info, as a production config logs: --quiet is what keeps the clean run silent.
    const w = world((c) => (c.log = { level: 'info', pretty: false }));
    fs.mkdirSync(w.outbox, { recursive: true });
    fs.copyFileSync('examples/order-orders.edi', `${w.outbox}/order-orders.edi`);
    const clean = runCli(['once', '-c', w.configFile, '--quiet']);
    expect(clean.status, clean.stderr).toBe(0);
    expect(fs.readdirSync(w.sent)).toEqual(['order-orders.edi']);
    expect(clean.stdout + clean.stderr).toBe('');
    fs.writeFileSync(`${w.outbox}/empty.edi`, '');
    const failed = runCli(['once', '-c', w.configFile, '--quiet']);
    expect(failed.status).toBe(1);
    expect(failed.stderr).toContain('empty.edi: failed: empty file [OUTBOUND_EMPTY_FILE]');
  });

  it('journal migrate: a password in --to is warned about (ps shows it), and an unreadable --to-file is named', () => {
    const w = world();
    const pw = 'Pw-9tQ4zK2m';
    // Port 9: nothing listens; what matters is said before the connection fails.
    const r = runCli(['journal', 'migrate', '--to', `postgres://u:${pw}@127.0.0.1:9/db`, '-c', w.configFile]);
    expect(r.stderr).toMatch(
      /^gridsync: warning: the password in --to is visible to every user of this machine \(ps, \/proc\); use --to-file URLFILE instead\n/,
    );
    expect(r.stderr).not.toContain(pw);
    const missing = runCli(['journal', 'migrate', '--to-file', `${w.dir}/no-such-file`, '-c', w.configFile]);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/^gridsync: --to-file \S+no-such-file: cannot be read \(ENOENT\)\n/);
  });

  it('a parcel id or a port that is none is refused before anything is noted or started', () => {
    // redeliver took 0 and 99999999999999999999 (as 1e20) and noted the requests in the journal;
    // emulator --port '' listened on a random port (Number('') is 0).
    const w = world();
    for (const id of ['0', '99999999999999999999', '1.5', '0x10']) {
      const r = runCli(['redeliver', id, '-c', w.configFile]);
      expect(r.status, id).toBe(2);
      expect(r.stderr, id).toMatch(new RegExp(`^gridsync: not a parcel id: ${id.replace('.', '\\.')}\\n`));
    }
    expect(fs.existsSync(w.state)).toBe(false);
    for (const port of ['', ' ', '80x']) {
      const r = runCli(['emulator', '--port', port]);
      expect(r.status, JSON.stringify(port)).toBe(2);
      expect(r.stderr).toContain('--port: not a port number');
    }
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
