// Config and secrets an operator can trust: where the key comes from (a systemd credential before
// a root-only key file), whose config is read implicitly, and warnings for what others can read
// or change. The cwd case needs root (a file owned by another user): skipped with a notice otherwise.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parseConfig } from '../../../src/config/index.js';
import { isRoot, prerequisite } from '../../helpers/require-tool.js';

const dirs: string[] = [];
const tmp = (): string => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-trust-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const base = (api: Record<string, unknown>): Record<string, unknown> => ({
  api: { baseUrl: 'https://grid.example.com', ...api },
  stateDir: 'state',
  mailboxes: [{ mailboxId: 1001, inbox: { dir: 'in' } }],
});

const asRoot = prerequisite('root', isRoot, 'a config in a directory owned by nobody is not checked as root');

describe('secrets: where the key comes from', () => {
  it('a systemd credential is used before api.apiKeyFile (the documented unit: the service user cannot read the root-only file)', () => {
    const d = tmp();
    const creds = path.join(d, 'credentials');
    fs.mkdirSync(creds);
    fs.writeFileSync(path.join(creds, 'gridsync-api-key'), 'key-from-credential\n', { mode: 0o400 });
    // The key file is not there for this user at all: trying it first is what broke the start-up.
    const loaded = parseConfig(base({ apiKeyFile: '/nonexistent/etc/gridsync/api-key' }), 'test.yaml', { CREDENTIALS_DIRECTORY: creds }, d);
    expect(loaded.config.api.apiKey).toBe('key-from-credential');
  });

  it('without a credential the key file is read; GRIDSYNC_API_KEY still beats both', () => {
    const d = tmp();
    fs.writeFileSync(path.join(d, 'key'), 'key-from-file\n', { mode: 0o600 });
    expect(parseConfig(base({ apiKeyFile: 'key' }), 'test.yaml', {}, d).config.api.apiKey).toBe('key-from-file');
    expect(parseConfig(base({ apiKeyFile: 'key' }), 'test.yaml', { GRIDSYNC_API_KEY: 'from-env' }, d).config.api.apiKey).toBe('from-env');
  });

  it('a key file readable by every user is a warning; 0600 and 0640 are not', () => {
    const d = tmp();
    fs.writeFileSync(path.join(d, 'key'), 'k\n');
    fs.chmodSync(path.join(d, 'key'), 0o644);
    expect(parseConfig(base({ apiKeyFile: 'key' }), 'test.yaml', {}, d).warnings.join('\n')).toMatch(
      /api\.apiKeyFile .*key is readable by every user \(mode 0644\)/,
    );
    for (const mode of [0o600, 0o640]) {
      fs.chmodSync(path.join(d, 'key'), mode);
      expect(parseConfig(base({ apiKeyFile: 'key' }), 'test.yaml', {}, d).warnings).toEqual([]);
    }
  });

  it('a config holding the key and readable by every user is a warning; one others can write, too', () => {
    const d = tmp();
    const file = path.join(d, 'gridsync.yaml');
    fs.writeFileSync(file, YAML.stringify(base({ apiKey: 'inline-secret' })));
    fs.chmodSync(file, 0o644);
    expect(loadConfig(file, {}).warnings.join('\n')).toMatch(/holds a secret .* readable by every user \(mode 0644\)/);
    fs.chmodSync(file, 0o640);
    expect(loadConfig(file, {}).warnings).toEqual([]);
    fs.chmodSync(file, 0o646);
    expect(loadConfig(file, {}).warnings.join('\n')).toMatch(/writable by every user/);
    // Without a secret inside, a readable config is normal.
    fs.writeFileSync(file, YAML.stringify(base({})));
    fs.chmodSync(file, 0o644);
    expect(loadConfig(file, { GRIDSYNC_API_KEY: 'k' }).warnings).toEqual([]);
  });
});

describe('environment', () => {
  it('a misspelt GRIDSYNC_ variable is reported, with the name it probably meant', () => {
    const loaded = parseConfig(
      base({ apiKey: 'k' }),
      'test.yaml',
      { GRIDSYNC_SCHEDULE_POLLL: '5s', GRIDSYNC_MAILBOXES_0_INBOX_DIRR: '/x', GRIDSYNC_CRASH_AT: 'a:1', GRIDSYNC_DEBUG: '1' },
      '/etc/gridsync',
    );
    expect(loaded.warnings).toEqual([
      'GRIDSYNC_SCHEDULE_POLLL is not a gridsync setting and is ignored (did you mean GRIDSYNC_SCHEDULE_POLL?)',
      'GRIDSYNC_MAILBOXES_0_INBOX_DIRR is not a gridsync setting and is ignored (did you mean GRIDSYNC_MAILBOXES_0_INBOX_DIR?)',
    ]);
    expect(loaded.config.schedule.poll).toBe(30_000);
  });

  it('NODE_TLS_REJECT_UNAUTHORIZED=0 is refused at start-up, pointing at NODE_EXTRA_CA_CERTS', () => {
    let err: unknown;
    try {
      parseConfig(base({ apiKey: 'k' }), 'test.yaml', { NODE_TLS_REJECT_UNAUTHORIZED: '0' }, '/etc/gridsync');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).key).toBe('NODE_TLS_REJECT_UNAUTHORIZED');
    expect((err as Error).message).toMatch(/refuses to start.*NODE_EXTRA_CA_CERTS/);
    expect(() => parseConfig(base({ apiKey: 'k' }), 'test.yaml', { NODE_TLS_REJECT_UNAUTHORIZED: '1' }, '/etc/gridsync')).not.toThrow();
  });
});

describe('implicit config from the working directory', () => {
  it('used when the invoking user owns it and nobody else can write it', () => {
    const d = tmp();
    fs.mkdirSync(path.join(d, 'config'));
    fs.writeFileSync(path.join(d, 'config', 'gridsync.yaml'), YAML.stringify(base({ apiKey: 'k' })), { mode: 0o600 });
    expect(loadConfig(undefined, {}, d).file).toBe(path.join(d, 'config', 'gridsync.yaml'));
    // Writable by others: not trusted any more.
    fs.chmodSync(path.join(d, 'config'), 0o777);
    expect(() => loadConfig(undefined, {}, d)).toThrow(
      /ignoring .*gridsync\.yaml found in the working directory: .*config is writable by others/,
    );
  });

  it.skipIf(!asRoot)('as root in a directory owned by nobody: that config is ignored, never read', () => {
    const d = tmp();
    fs.chmodSync(d, 0o755);
    fs.mkdirSync(path.join(d, 'config'));
    const file = path.join(d, 'config', 'gridsync.yaml');
    fs.writeFileSync(file, YAML.stringify(base({ apiKey: 'k', apiKeyFile: '/etc/shadow' })), { mode: 0o644 });
    fs.chownSync(d, 65534, 65534);
    fs.chownSync(path.join(d, 'config'), 65534, 65534);
    fs.chownSync(file, 65534, 65534);
    let loadedFile: string | undefined;
    let message = '';
    try {
      loadedFile = loadConfig(undefined, {}, d).file;
    } catch (err) {
      message = (err as Error).message;
    }
    expect(loadedFile).not.toBe(file);
    if (loadedFile === undefined)
      expect(message).toMatch(
        /ignoring .*gridsync\.yaml found in the working directory: .* is owned by uid 65534, not by you \(uid 0\) or root \(pass -c/,
      );
  });
});
