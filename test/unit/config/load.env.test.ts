import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { applyEnvOverrides, ConfigError, parseConfig } from '../../../src/config/index.js';

const base = (): Record<string, any> => ({
  api: { baseUrl: 'https://grid.example.com' },
  stateDir: '/tmp/gs-state',
  mailboxes: [{ mailboxId: 1001, inbox: { dir: '/tmp/gs-in' } }],
});

describe('GRIDSYNC_ environment overrides', () => {
  it('maps the key path in upper snake case, including the documented API names', () => {
    const { config, envKeys } = parseConfig(
      base(),
      't',
      {
        GRIDSYNC_API_BASE_URL: 'https://other.example.com',
        GRIDSYNC_API_KEY: 'secret-key',
        GRIDSYNC_STATE_DIR: '/srv/state',
        GRIDSYNC_SCHEDULE_POLL: '5m',
        GRIDSYNC_HTTP_ENABLED: 'false',
        GRIDSYNC_API_TIMEOUTS_CONNECT_MS: '2s',
        GRIDSYNC_MAILBOXES_0_INBOX_DIR: '/srv/in',
        GRIDSYNC_MAILBOXES_0_INBOX_DONE_MARKER: 'yes',
        GRIDSYNC_SCHEDULE_CRON: '0 2 * * *; 30 12 * * 1-5',
        PATH: '/usr/bin',
      },
      '/',
    );
    expect(config.api.baseUrl).toBe('https://other.example.com');
    expect(config.api.apiKey).toBe('secret-key');
    expect(config.stateDir).toBe('/srv/state');
    expect(config.schedule.poll).toBe(300_000);
    expect(config.http.enabled).toBe(false);
    expect(config.api.timeouts.connectMs).toBe(2000);
    expect(config.mailboxes[0]?.inbox?.dir).toBe('/srv/in');
    expect(config.mailboxes[0]?.inbox?.doneMarker).toBe(true);
    expect(config.schedule.cron).toEqual(['0 2 * * *', '30 12 * * 1-5']);
    expect(envKeys).toContain('api.apiKey');
    expect(envKeys.join(' ')).not.toContain('secret-key');
  });

  it('"false" from the environment is false (z.stringbool, not coerce)', () => {
    const raw = base();
    raw.http = { enabled: true };
    expect(parseConfig(raw, 't', { GRIDSYNC_API_KEY: 'k', GRIDSYNC_HTTP_ENABLED: 'false' }, '/').config.http.enabled).toBe(false);
    expect(parseConfig(raw, 't', { GRIDSYNC_API_KEY: 'k', GRIDSYNC_HTTP_ENABLED: '0' }, '/').config.http.enabled).toBe(false);
  });

  it('a bad value from the environment names the key', () => {
    expect(() => parseConfig(base(), 't', { GRIDSYNC_API_KEY: 'k', GRIDSYNC_SCHEDULE_POLL: 'often' }, '/')).toThrow(
      /GRIDSYNC_SCHEDULE_POLL \(environment, sets schedule\.poll\): expected a duration/,
    );
  });

  it('apiKeyFile (not apiKey + "_FILE") and unknown names are left alone', () => {
    const raw = base();
    const keys = applyEnvOverrides(raw, { GRIDSYNC_API_KEY_FILE: '/run/key', GRIDSYNC_NO_SUCH_THING: 'x', GRIDSYNC_CRASH_AT: 'a:1' });
    expect(keys).toEqual(['api.apiKeyFile']);
    expect(raw.api.apiKeyFile).toBe('/run/key');
    expect(raw.api.apiKey).toBeUndefined();
  });
});

describe('secrets from files and systemd credentials', () => {
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
  const tmp = (): string => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-secret-'));
    dirs.push(d);
    return d;
  };

  it('apiKeyFile, relative to the config directory, trimmed', () => {
    const d = tmp();
    fs.writeFileSync(path.join(d, 'apikey'), 'key-from-file\n', { mode: 0o600 });
    const raw = base();
    raw.api.apiKeyFile = 'apikey';
    expect(parseConfig(raw, 't', {}, d).config.api.apiKey).toBe('key-from-file');
  });

  it('a key file from the environment replaces a key in the config; a key from the environment beats both', () => {
    const d = tmp();
    fs.writeFileSync(path.join(d, 'secret'), 'key-from-file');
    const raw = base();
    raw.api.apiKey = 'demo-key-1001';
    expect(parseConfig(raw, 't', { GRIDSYNC_API_KEY_FILE: path.join(d, 'secret') }, '/').config.api.apiKey).toBe('key-from-file');
    expect(parseConfig(raw, 't', { GRIDSYNC_API_KEY_FILE: path.join(d, 'secret'), GRIDSYNC_API_KEY: 'env' }, '/').config.api.apiKey).toBe(
      'env',
    );
  });

  it('an unreadable or empty apiKeyFile names the key', () => {
    const d = tmp();
    const raw = base();
    raw.api.apiKeyFile = 'missing';
    expect(() => parseConfig(raw, 't', {}, d)).toThrow(ConfigError);
    expect(() => parseConfig(raw, 't', {}, d)).toThrow(/api\.apiKeyFile: cannot read/);
    fs.writeFileSync(path.join(d, 'empty'), '\n');
    raw.api.apiKeyFile = 'empty';
    expect(() => parseConfig(raw, 't', {}, d)).toThrow(/api\.apiKeyFile: .* is empty/);
  });

  it('$CREDENTIALS_DIRECTORY/gridsync-api-key (systemd LoadCredential=gridsync-api-key:…)', () => {
    const d = tmp();
    fs.writeFileSync(path.join(d, 'gridsync-api-key'), 'key-from-systemd');
    expect(parseConfig(base(), 't', { CREDENTIALS_DIRECTORY: d }, '/').config.api.apiKey).toBe('key-from-systemd');
    // An explicit key in the file or env wins over the credential.
    expect(parseConfig(base(), 't', { CREDENTIALS_DIRECTORY: d, GRIDSYNC_API_KEY: 'env' }, '/').config.api.apiKey).toBe('env');
  });

  it('login + passwordFile or the gridsync-password credential (bearer)', () => {
    const d = tmp();
    fs.writeFileSync(path.join(d, 'gridsync-password'), 'Demo-pass1');
    const raw = base();
    raw.api.login = 'erp';
    expect(parseConfig(raw, 't', { CREDENTIALS_DIRECTORY: d }, '/').config.api.password).toBe('Demo-pass1');
    raw.api.passwordFile = 'gridsync-password';
    expect(parseConfig(raw, 't', {}, d).config.api.password).toBe('Demo-pass1');
  });
});
