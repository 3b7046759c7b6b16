import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parseConfig } from '../../../src/config/index.js';

const base = (): Record<string, any> => ({
  api: { baseUrl: 'https://grid.example.com', apiKey: 'k' },
  stateDir: '/tmp/gs-state',
  mailboxes: [
    { mailboxId: 1001, inbox: { dir: '/tmp/gs-in' }, outbox: { dir: '/tmp/gs-out', sentDir: '/tmp/gs-sent', errorDir: '/tmp/gs-err' } },
  ],
});

function errorOf(raw: unknown): ConfigError {
  try {
    parseConfig(raw, 'test.yaml', {}, '/etc/gridsync');
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('config errors name the key and the expected form', () => {
  it('a bad duration', () => {
    const raw = base();
    raw.mailboxes[0].outbox.stableMs = 'soon';
    const e = errorOf(raw);
    expect(e.key).toBe('mailboxes[0].outbox.stableMs');
    expect(e.message).toMatch(/mailboxes\[0\]\.outbox\.stableMs: expected a duration such as .*30s/);
  });

  it('a duration a timer waits on is at most ~24.8 days (Node fires a longer timer at once: a poll loop without pause)', () => {
    const raw = base();
    raw.schedule = { poll: '30d' };
    const e = errorOf(raw);
    expect(e.key).toBe('schedule.poll');
    expect(e.message).toMatch(/schedule\.poll: .*at most 2147483647 ms/);
    const hooks = base();
    hooks.mailboxes[0].outbox.rescanMs = 25 * 86_400_000;
    expect(errorOf(hooks).key).toBe('mailboxes[0].outbox.rescanMs');
    // A window compared against timestamps is no timer: a duplicate window of 90 days stays valid.
    const window = base();
    window.mailboxes[0].outbox.duplicateWindowMs = '90d';
    window.schedule = { poll: '24d' };
    const { config } = parseConfig(window, 'test.yaml', {}, '/etc/gridsync');
    expect(config.mailboxes[0]?.outbox?.duplicateWindowMs).toBe(90 * 86_400_000);
    expect(config.schedule.poll).toBe(24 * 86_400_000);
  });

  it('api.protocol: rest (default) or soap, anything else named', () => {
    expect(parseConfig(base(), 'test.yaml', {}, '/etc/gridsync').config.api.protocol).toBe('rest');
    const soap = base();
    soap.api.protocol = 'soap';
    expect(parseConfig(soap, 'test.yaml', {}, '/etc/gridsync').config.api.protocol).toBe('soap');
    expect(parseConfig(base(), 'test.yaml', { GRIDSYNC_API_PROTOCOL: 'soap' }, '/etc/gridsync').config.api.protocol).toBe('soap');
    const raw = base();
    raw.api.protocol = 'ftp';
    const e = errorOf(raw);
    expect(e.key).toBe('api.protocol');
    expect(e.message).toMatch(/api\.protocol: expected one of rest, soap, got "ftp"/);
  });

  it('{partner} is an inbox template variable and listed in the error; a sentDir template refuses variables it cannot fill', () => {
    const ok = base();
    ok.mailboxes[0].inbox.nameTemplate = '{partner}/{date}/{fileName}';
    ok.partners = { 7001: 'Acme Corp' };
    expect(parseConfig(ok, 'test.yaml', {}, '/etc/gridsync').config.partners).toEqual({ '7001': 'Acme Corp' });
    const typo = base();
    typo.mailboxes[0].inbox.nameTemplate = '{partnr}/{fileName}';
    const e = errorOf(typo);
    expect(e.key).toBe('mailboxes[0].inbox.nameTemplate');
    expect(e.message).toContain('{partner}');
    for (const v of ['{partner}', '{gridIdFrom}']) {
      const sent = base();
      sent.mailboxes[0].outbox.sentTemplate = `${v}/{fileName}`;
      expect(errorOf(sent).key).toBe('mailboxes[0].outbox.sentTemplate');
    }
  });

  it('partners: a key that is not a grid id, or a name that is not one folder name, is named', () => {
    for (const [partners, key] of [
      [{ acme: 'Acme' }, 'partners.acme'],
      [{ 7001: '' }, 'partners.7001'],
      [{ 7001: 'a/b' }, 'partners.7001'],
      [{ 7001: 'tab\there' }, 'partners.7001'],
      [{ 7001: '..' }, 'partners.7001'],
      [['Acme'], 'partners'],
    ] as const) {
      const raw = base();
      raw.partners = partners;
      expect(errorOf(raw).key, JSON.stringify(partners)).toBe(key);
    }
  });

  it('a wrong type', () => {
    const raw = base();
    raw.mailboxes[0].inbox.concurrency = 'many';
    expect(errorOf(raw).message).toMatch(/mailboxes\[0\]\.inbox\.concurrency: .*number/i);
  });

  it('an unknown key (a typo)', () => {
    const raw = base();
    raw.mailboxes[0].outbox.stableMS = 100;
    const e = errorOf(raw);
    expect(e.key).toBe('mailboxes[0].outbox');
    expect(e.message).toMatch(/stableMS/);
  });

  it('a missing required key', () => {
    const raw = base();
    delete raw.stateDir;
    expect(errorOf(raw).message).toMatch(/stateDir: /);
  });

  it('an enum value out of the list', () => {
    const raw = base();
    raw.mailboxes[0].inbox.collision = 'replace';
    expect(errorOf(raw).message).toMatch(/mailboxes\[0\]\.inbox\.collision: expected one of unique, overwrite, fail, got "replace"/);
  });

  it('sentDir required unless archive is delete', () => {
    const raw = base();
    delete raw.mailboxes[0].outbox.sentDir;
    expect(errorOf(raw).message).toMatch(/mailboxes\[0\]\.outbox\.sentDir: sentDir is required unless archive is "delete"/);
    raw.mailboxes[0].outbox.archive = 'delete';
    expect(() => parseConfig(raw, 't', {}, '/')).not.toThrow();
  });

  it('an invalid cron expression and an unknown timezone', () => {
    const raw = base();
    raw.schedule = { cron: ['0 2 * * *', 'at two'] };
    const e = errorOf(raw);
    expect(e.key).toBe('schedule.cron[1]');
    expect(e.message).toMatch(/expected a cron expression/);
    raw.schedule = { cron: ['0 2 * * *'], timezone: 'Mars/Olympus' };
    expect(errorOf(raw).key).toBe('schedule.timezone');
  });

  it('windows-only outbound without cron', () => {
    const raw = base();
    raw.schedule = { outbound: 'windows' };
    expect(errorOf(raw).key).toBe('schedule.outbound');
  });

  it('plain http to a non-loopback host is refused unless allowInsecureHttp', () => {
    const raw = base();
    raw.api.baseUrl = 'http://192.0.2.10:8080';
    const e = errorOf(raw);
    expect(e.key).toBe('api.baseUrl');
    expect(e.message).toMatch(/plain http/);
    raw.api.allowInsecureHttp = true;
    expect(() => parseConfig(raw, 't', {}, '/')).not.toThrow();
    raw.api = { baseUrl: 'http://127.0.0.1:8080', apiKey: 'k' };
    expect(() => parseConfig(raw, 't', {}, '/')).not.toThrow();
  });

  it('no credentials at all', () => {
    const raw = base();
    delete raw.api.apiKey;
    const e = errorOf(raw);
    expect(e.key).toBe('api.apiKey');
    expect(e.message).toMatch(/GRIDSYNC_API_KEY/);
  });

  it('a template with an unknown variable', () => {
    const raw = base();
    raw.mailboxes[0].inbox.nameTemplate = '{sender}-{fileName}';
    expect(errorOf(raw).message).toMatch(/mailboxes\[0\]\.inbox\.nameTemplate: unknown variable/);
  });

  it('a mailbox with neither inbox nor outbox, and a name used twice', () => {
    const raw = base();
    raw.mailboxes.push({ mailboxId: 7 });
    expect(errorOf(raw).message).toMatch(/mailboxes\[1\]: a mailbox needs an inbox, an outbox, or both/);
    raw.mailboxes[1] = { mailboxId: 1001, inbox: { dir: '/tmp/x' } };
    expect(errorOf(raw).key).toBe('mailboxes[1].name');
  });
});

describe('loadConfig: the file', () => {
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
  const tmp = (): string => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-config-'));
    dirs.push(d);
    return d;
  };

  it('a missing file, broken YAML, and a YAML list are ConfigErrors', () => {
    const d = tmp();
    expect(() => loadConfig(path.join(d, 'none.yaml'), {})).toThrow(/does not exist/);
    fs.writeFileSync(path.join(d, 'bad.yaml'), 'api: [unclosed\n');
    expect(() => loadConfig(path.join(d, 'bad.yaml'), {})).toThrow(/not valid YAML/);
    fs.writeFileSync(path.join(d, 'list.yaml'), '- a\n- b\n');
    expect(() => loadConfig(path.join(d, 'list.yaml'), {})).toThrow(/expected a YAML mapping/);
  });

  it('resolves relative paths against the config file directory and applies defaults', () => {
    const d = tmp();
    const file = path.join(d, 'gridsync.yaml');
    fs.writeFileSync(
      file,
      'api: { baseUrl: embedded, apiKey: k }\nstateDir: ./state\nmailboxes:\n  - inbox: { dir: in }\n    outbox: { dir: ../out, sentDir: sent, errorDir: err, stableMs: 1.5s }\n',
    );
    const { config } = loadConfig(file, {});
    expect(config.stateDir).toBe(path.join(d, 'state'));
    expect(config.mailboxes[0]?.inbox?.dir).toBe(path.join(d, 'in'));
    expect(config.mailboxes[0]?.outbox?.dir).toBe(path.join(path.dirname(d), 'out'));
    expect(config.mailboxes[0]?.outbox?.stableMs).toBe(1500);
    expect(config.mailboxes[0]?.outbox?.rescanMs).toBe(30_000);
    expect(config.schedule.poll).toBe(30_000);
    expect(config.http).toEqual({ enabled: false, host: '127.0.0.1', port: 9464 });
    // Named `mb<id>` by the daemon once the service tells the session's mailbox (metrics labels, logs).
    expect(config.mailboxes[0]?.name).toBeUndefined();
  });

  it('the shipped configs are valid: the quick-start one and the documented example', () => {
    const repo = path.resolve(import.meta.dirname, '../../..');
    const quick = loadConfig(path.join(repo, 'config/gridsync.yaml'), {});
    expect(quick.config.api.baseUrl).toBe('embedded');
    expect(quick.config.stateDir).toBe(path.join(repo, 'var/state'));
    expect(quick.config.mailboxes[0]?.inbox?.dir).toBe(path.join(repo, 'var/inbox'));
    const example = loadConfig(path.join(repo, 'config/gridsync.example.yaml'), { GRIDSYNC_API_KEY: 'from-env' });
    expect(example.config.api.apiKey).toBe('from-env');
  });
});
