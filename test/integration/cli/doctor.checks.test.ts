// doctor as an operator relies on it before a first start: bounded in time against a service that
// accepts TCP and never answers (it was silent for 62 s), says what it waits for, never prints a
// password written in baseUrl, checks every mailbox with the key, the http port, key-file and
// folder permissions. And `once` refuses a mailbox the key cannot reach with one clear line
// instead of a stack trace (run sent every outbound file to errorDir).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { DOCTOR_SERVICE_BUDGET_MS } from '../../../src/config/defaults.js';
import { startEmulator } from '@gridsync/emulator';
import { cliPath, runCli } from '../../helpers/daemon-child.js';
import { x12 } from '../../helpers/edi.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function world(api: Record<string, unknown>, extra: Record<string, unknown> = {}, mailbox: Record<string, unknown> = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-doctor-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  const configFile = path.join(dir, 'gridsync.yaml');
  fs.writeFileSync(
    configFile,
    YAML.stringify({
      api,
      stateDir: './state',
      log: { level: 'warn', pretty: false },
      mailboxes: [
        {
          mailboxId: 1001,
          inbox: { dir: './inbox' },
          outbox: { dir: './outbox', sentDir: './sent', errorDir: './error', stableMs: 0 },
          ...mailbox,
        },
      ],
      ...extra,
    }),
    { mode: 0o600 },
  );
  return { dir, configFile };
}

/** Runs the CLI asynchronously (spawnSync would block the silent server living in this process). */
function cli(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string; ms: number }> {
  const started = Date.now();
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [cliPath, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('exit', (status) => resolve({ status, stdout, stderr, ms: Date.now() - started }));
  });
}

describe('doctor', () => {
  it('a service that accepts TCP and never answers: done within 15 s, says what it waited for; no password from baseUrl', async () => {
    const held: net.Socket[] = [];
    const silent = net.createServer((s) => held.push(s));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise<void>((r) => (held.forEach((s) => s.destroy()), silent.close(() => r()))));
    const port = (silent.address() as net.AddressInfo).port;
    const w = world({ baseUrl: `http://operator:s3cret-pw@127.0.0.1:${port}`, apiKey: 'k' });
    const r = await cli(['doctor', '-c', w.configFile]);
    expect(r.ms).toBeLessThan(15_000);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/… waiting for http:\/\/operator:\*\*\*@127\.0\.0\.1:\d+: GET \/v2\/version/);
    expect(r.stdout).toMatch(/✗ service http:\/\/operator:\*\*\*@127\.0\.0\.1:\d+: no answer within \d+ s while waiting for/);
    expect(r.stdout).toMatch(/✗ credentials: not checked: the service did not answer above/);
    expect(r.stdout + r.stderr).not.toContain('s3cret-pw');
  });

  it('a service that answers promptly: no "waiting for" lines, done well within the budget', async () => {
    const emu = await startEmulator({ port: 0 });
    cleanups.push(() => emu.close());
    const w = world({ baseUrl: emu.url, apiKey: 'demo-key-1001' });
    const r = await cli(['doctor', '-c', w.configFile]);
    expect(r.stdout).toMatch(/✓ service http:\/\/127\.0\.0\.1:\d+: answers/);
    expect(r.stdout).toMatch(/✓ mailboxes\[0\] mb1001: mailbox 1001 reachable with the key/);
    expect(r.status).toBe(0);
    expect(r.stderr).not.toContain('waiting for');
    expect(r.ms).toBeLessThan(DOCTOR_SERVICE_BUDGET_MS);
  });

  it('every mailbox is checked with the key; the http port, key file and folder modes are shown', async () => {
    const emu = await startEmulator({ port: 0 });
    cleanups.push(() => emu.close());
    const taken = net.createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise<void>((r) => taken.close(() => r())));
    const port = (taken.address() as net.AddressInfo).port;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-doctor-key-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    fs.writeFileSync(path.join(dir, 'api-key'), 'demo-key-1001\n', { mode: 0o644 });
    fs.chmodSync(path.join(dir, 'api-key'), 0o644);
    const w = world({ baseUrl: emu.url, apiKeyFile: path.join(dir, 'api-key') }, { http: { enabled: true, port } }, {});
    const cfg = YAML.parse(fs.readFileSync(w.configFile, 'utf8'));
    cfg.mailboxes.push({ mailboxId: 999, name: 'typo', inbox: { dir: './inbox-999' } });
    fs.writeFileSync(w.configFile, YAML.stringify(cfg));
    fs.mkdirSync(path.join(w.dir, 'inbox'));
    fs.chmodSync(path.join(w.dir, 'inbox'), 0o2770);
    fs.mkdirSync(path.join(w.dir, 'outbox'));
    fs.chmodSync(path.join(w.dir, 'outbox'), 0o777);

    const r = await cli(['doctor', '-c', w.configFile]);
    expect(r.status).toBe(2);
    expect(r.stdout).toMatch(/! api\.apiKeyFile .*api-key is readable by every user \(mode 0644\)/);
    expect(r.stdout).toMatch(/✓ mb1001 inbox .*inbox: \w+:\w+ 2770/);
    expect(r.stdout).toMatch(/! mb1001 outbox .*outbox: \w+:\w+ 0777: writable by every user/);
    expect(r.stdout).toMatch(new RegExp(`✗ http port 127\\.0\\.0\\.1:${port}: in use by another program`));
    expect(r.stdout).toMatch(/✓ service http:\/\/127\.0\.0\.1:\d+: answers, version/);
    expect(r.stdout).toMatch(/✓ credentials: user \S+ \(mailbox 1001/);
    expect(r.stdout).toMatch(/✓ mailboxes\[0\] mb1001: mailbox 1001 reachable with the key/);
    expect(r.stdout).toMatch(
      /✗ mailboxes\[1\] typo: mailbox 999 reachable with the key: the key cannot reach mailbox 999 \(ObjectNotFound\)/,
    );
  });
});

describe('doctor over SOAP', () => {
  it('asks the service through the SOAP interface when api.protocol is soap', async () => {
    const emu = await startEmulator({ port: 0 });
    cleanups.push(() => emu.close());
    const w = world({ baseUrl: emu.url, protocol: 'soap', apiKey: 'demo-key-1001' }, {}, {});
    const cfg = YAML.parse(fs.readFileSync(w.configFile, 'utf8'));
    cfg.mailboxes.push({ mailboxId: 1002, name: 'other', inbox: { dir: './inbox-1002' } });
    fs.writeFileSync(w.configFile, YAML.stringify(cfg), { mode: 0o600 });
    const r = await cli(['doctor', '-c', w.configFile]);
    expect(r.stdout).toMatch(/✓ service http:\/\/127\.0\.0\.1:\d+: answers, version v4\.1/);
    expect(r.stdout).toMatch(/✓ credentials: user erp \(mailbox 1001, MailboxAdmin\)/);
    expect(r.stdout).toMatch(
      /✗ mailboxes\[1\] other: mailbox 1002 reachable with the key: the key cannot reach mailbox 1002 \(AccessDenied\)/,
    );
  });
});

describe('a mailbox the key cannot reach', () => {
  it('once exits 2 with one line naming the key path; no stack trace, no file sent to errorDir', () => {
    const w = world({ baseUrl: 'embedded', apiKey: 'demo-key-1001' }, {}, { mailboxId: 4242 });
    fs.mkdirSync(path.join(w.dir, 'outbox'));
    fs.writeFileSync(path.join(w.dir, 'outbox', 'po.x12'), x12(7));
    const r = runCli(['once', '-c', w.configFile]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/mailboxes\[0\]\.mailboxId: the API key \(user of mailbox 1001\) cannot reach mailbox 4242/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(fs.existsSync(path.join(w.dir, 'error')) ? fs.readdirSync(path.join(w.dir, 'error')) : []).toEqual([]);
    expect(fs.readdirSync(path.join(w.dir, 'outbox'))).toEqual(['po.x12']);
  });
});
