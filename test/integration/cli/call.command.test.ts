// `gridsync call` (docs/contracts.md) against the emulator: data as JSON on stdout, errors on stderr with exit 1, usage exit 2.
import { spawn } from 'node:child_process';
import path from 'node:path';
import fs from 'node:fs';
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '@gridsync/emulator';
import { repoRoot } from '../../helpers/journal-child.js';

let emu: Emulator;
beforeAll(async () => {
  emu = await startEmulator();
});
afterAll(async () => emu.close());

// Keys go in files, as operators should pass them (--api-key in argv shows in ps and warns).
const keyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-call-keys-'));
afterAll(() => fs.rmSync(keyDir, { recursive: true, force: true }));
function keyFile(key: string): string {
  const f = path.join(keyDir, key.replace(/[^\w-]/g, '_'));
  fs.writeFileSync(f, `${key}\n`, { mode: 0o600 });
  return f;
}

function call(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [path.join(repoRoot, 'dist/cli/main.js'), 'call', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    c.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    c.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('gridsync call', () => {
  it('prints the data of one call as JSON', async () => {
    const id = await emu.inject({ mailboxId: 1001, fileName: 'c.x12', content: Buffer.from('c') });
    const r = await call(
      'POST',
      '/v2/parcels/pending-inbox-list',
      '{"mailboxId":1001}',
      '--base-url',
      emu.url,
      '--api-key-file',
      keyFile('demo-key-1001'),
    );
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([expect.objectContaining({ parcelId: id, fileName: 'c.x12' })]);
    const get = await call('GET', '/v2/users/me', '--base-url', emu.url, '--api-key-file', keyFile('demo-key-1001'));
    expect(JSON.parse(get.stdout)).toMatchObject({ login: 'erp' });
  });

  it('takes the key from a file (--api-key-file) so it never shows in ps; --api-key warns that it does', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-call-key-'));
    try {
      fs.writeFileSync(path.join(dir, 'key'), 'demo-key-1001\n', { mode: 0o600 });
      const r = await call('GET', '/v2/users/me', '--base-url', emu.url, '--api-key-file', path.join(dir, 'key'));
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ mailboxId: 1001 });
      const inArgv = await call('GET', '/v2/users/me', '--base-url', emu.url, '--api-key', 'demo-key-1001');
      expect(inArgv.code).toBe(0);
      expect(inArgv.stderr).toMatch(/--api-key is visible to every user .*--api-key-file FILE or GRIDSYNC_API_KEY/);
      const missing = await call('GET', '/v2/users/me', '--base-url', emu.url, '--api-key-file', path.join(dir, 'nope'));
      expect(missing.code).toBe(2);
      expect(missing.stderr).toMatch(/--api-key-file .*nope: ENOENT/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('prints errorCode and message to stderr and exits 1 on a service error', async () => {
    const r = await call('GET', '/v2/parcels/999999', '--base-url', emu.url, '--api-key-file', keyFile('demo-key-1001'));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^ObjectNotFound: parcel 999999 not found/);
    expect(r.stdout).toBe('');
  });

  it('exits 2 on usage errors and lists the catalog', async () => {
    expect((await call('FETCH', '/v2/users/me', '--base-url', emu.url, '--api-key-file', keyFile('k'))).code).toBe(2);
    expect((await call('POST', '/v2/x', '{not json', '--base-url', emu.url, '--api-key-file', keyFile('k'))).code).toBe(2);
    expect((await call('GET', '/v2/users/me')).stderr).toMatch(/no service/);
    // A PATH without its leading slash was sent, and failed as a transport error (exit 1).
    const relative = await call('GET', 'v2/users/me', '--base-url', emu.url, '--api-key-file', keyFile('k'));
    expect(relative.code).toBe(2);
    expect(relative.stderr).toBe('gridsync: PATH must start with /, such as /v2/users/me, not v2/users/me\n');
    const list = await call('--list');
    expect(list.code).toBe(0);
    expect(list.stdout.trim().split('\n')).toHaveLength(119);
  });

  it('plain http off loopback without a config: the refusal names the switch this command takes, and --help shows it', async () => {
    // It said "set api.allowInsecureHttp: true", a key of a config this call does not have.
    const refused = await call('GET', '/v2/users/me', '--base-url', 'http://192.0.2.10:8080', '--api-key-file', keyFile('k'));
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/plain http:\/\/ to 192\.0\.2\.10 is refused.*--allow-insecure-http/s);
    expect((await call('--help')).stdout).toContain('--allow-insecure-http');
  });

  it("a client's refusal at connect time keeps its code and the table's exit; a service error names our code beside the service's", async () => {
    // With -c the URL check is the client's (GridConfigError): it came out as CLI_USAGE, with no code to grep.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-call-config-'));
    try {
      const config = path.join(dir, 'gridsync.yaml');
      fs.writeFileSync(
        config,
        `api:\n  baseUrl: ${emu.url}\n  apiKeyFile: ${keyFile('demo-key-1001')}\nstateDir: ./state\nmailboxes:\n  - mailboxId: 1001\n    inbox: { dir: ./inbox }\n`,
        { mode: 0o600 },
      );
      const refused = await call('GET', '/v2/users/me', '-c', config, '--base-url', 'http://192.0.2.10:8080');
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/plain http:\/\/ to 192\.0\.2\.10 is refused.*\[GRID_CONFIG_ERROR\]/s);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    const rejected = await call('GET', '/v2/users/me', '--base-url', emu.url, '--api-key-file', keyFile('revoked-key'));
    expect(rejected.code).toBe(1);
    expect(rejected.stderr).toMatch(/^InvalidAPIKey: .*\[GRID_API_ERROR\]\n$/);
  });
});

describe('gridsync call --soap', () => {
  it('calls one SOAP operation and prints its result as JSON (64-bit ids as strings)', async () => {
    const id = await emu.inject({ mailboxId: 1001, fileName: 'soap.x12', content: Buffer.from('s') });
    const r = await call('--soap', 'ParcelInBox', '{}', '--base-url', emu.url, '--api-key-file', keyFile('demo-key-1001'));
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { Count: number; ParcelIDInfoList: { ParcelID: string; FileName: string }[] };
    expect(out.ParcelIDInfoList).toContainEqual(expect.objectContaining({ ParcelID: String(id), FileName: 'soap.x12' }));
    const info = await call(
      '--soap',
      'ParcelInfo',
      `{"ParcelID":"${id}"}`,
      '--base-url',
      emu.url,
      '--api-key-file',
      keyFile('demo-key-1001'),
    );
    expect(JSON.parse(info.stdout)).toMatchObject({ ParcelID: String(id), Direction: 'InBox', StatusCode: 'InBoxReady' });
    const who = await call('--soap', 'WhoAmI', '--base-url', emu.url, '--api-key', 'demo-key-1001');
    expect(JSON.parse(who.stdout)).toMatchObject({ UserID: 11, MailboxID: 1001, SessionID: '(redacted)' });
    expect(who.stdout).not.toContain('demo-key-1001');
  });

  it('a fault goes to stderr with its code and item, exit 1; an unknown operation is a usage error', async () => {
    const r = await call('--soap', 'ParcelInfo', '{"ParcelID":"1"}', '--base-url', emu.url, '--api-key-file', keyFile('demo-key-1001'));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^soap:Client 4 \(ParcelID\): Parcel 1 not found/);
    const bad = await call('--soap', 'ParcelOutBox', '{}', '--base-url', emu.url, '--api-key-file', keyFile('demo-key-1001'));
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/unknown SOAP operation ParcelOutBox/);
    const list = await call('--soap', '--list');
    expect(list.stdout.trim().split('\n')).toHaveLength(66);
  });
});
