/**
 * Choosing the journal from the config: journal.url, journal.urlFile and GRIDSYNC_JOURNAL_URL select
 * PostgreSQL, instance.name names this instance, the lease timings default to 10 s / 3 s — and a
 * URL that cannot be used is refused without its password in the message.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig, secretsOf } from '../../../src/config/index.js';
import { scrubSecrets } from '../../../src/errors/index.js';
import { describeJournal } from '../../../src/journal/index.js';

const base = (): Record<string, unknown> => ({
  api: { baseUrl: 'https://grid.example.com', apiKey: 'k-123456' },
  stateDir: '/tmp/gs-state',
  mailboxes: [{ mailboxId: 1001, inbox: { dir: '/tmp/gs-in' } }],
});
const URL_WITH_PASSWORD = 'postgres://gridsync:pa55-w0rd-x@db.example.com:5432/gridsync';

describe('journal and instance settings', () => {
  it('defaults: SQLite in stateDir, leases of 10 s renewed every 3 s, no instance name', () => {
    const { config } = parseConfig(base(), 't', {}, '/');
    expect(config.journal).toEqual({ lease: 10_000, renew: 3_000 });
    expect(config.instance).toEqual({});
    expect(describeJournal({ url: config.journal.url, stateDir: config.stateDir })).toBe('/tmp/gs-state/journal.sqlite');
  });

  it('GRIDSYNC_JOURNAL_URL and GRIDSYNC_INSTANCE_NAME set the keys; the journal is shown with its password masked', () => {
    const { config, envKeys } = parseConfig(base(), 't', { GRIDSYNC_JOURNAL_URL: URL_WITH_PASSWORD, GRIDSYNC_INSTANCE_NAME: 'edi-a' }, '/');
    expect(envKeys).toEqual(expect.arrayContaining(['journal.url', 'instance.name']));
    expect(config.journal.url).toBe(URL_WITH_PASSWORD);
    expect(config.instance.name).toBe('edi-a');
    const shown = describeJournal({ url: config.journal.url, stateDir: config.stateDir });
    expect(shown).not.toContain('pa55-w0rd-x');
    expect(shown).toContain('db.example.com');
  });

  it("the journal URL's password is one of the config's secrets: every sink masks it, also where a driver quotes it", () => {
    const { config } = parseConfig(base(), 't', { GRIDSYNC_JOURNAL_URL: URL_WITH_PASSWORD }, '/');
    expect(secretsOf(config)).toContain('pa55-w0rd-x');
    expect(scrubSecrets(`connect failed for ${URL_WITH_PASSWORD}`, secretsOf(config))).not.toContain('pa55-w0rd-x');
  });

  it('journal.urlFile (also GRIDSYNC_JOURNAL_URL_FILE) reads the URL from a file', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-journal-url-'));
    try {
      const file = path.join(dir, 'url');
      fs.writeFileSync(file, `${URL_WITH_PASSWORD}\n`, { mode: 0o600 });
      expect(parseConfig({ ...base(), journal: { urlFile: file } }, 't', {}, '/').config.journal.url).toBe(URL_WITH_PASSWORD);
      expect(parseConfig(base(), 't', { GRIDSYNC_JOURNAL_URL_FILE: file }, '/').config.journal.url).toBe(URL_WITH_PASSWORD);
      fs.writeFileSync(file, 'mysql://root:pa55-w0rd-x@db/x');
      expect(() => parseConfig({ ...base(), journal: { urlFile: file } }, 't', {}, '/')).toThrow(/does not hold a postgres:\/\/ URL/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a journal.url that is not a postgres:// URL is refused, without echoing the password', () => {
    let message = '';
    try {
      parseConfig(base(), 't', { GRIDSYNC_JOURNAL_URL: 'mysql://root:pa55-w0rd-x@db/x' }, '/');
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/journal\.url/);
    expect(message).not.toContain('pa55-w0rd-x');
  });
});
