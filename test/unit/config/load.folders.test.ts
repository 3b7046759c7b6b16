// Overlapping or nested folders make the daemon feed on its own output (received files claimed as
// outbound, error files re-claimed for ever): the config is refused, naming both keys.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../../src/config/index.js';

const base = (): Record<string, any> => ({
  api: { baseUrl: 'https://grid.example.com', apiKey: 'k' },
  stateDir: '/srv/gs/state',
  mailboxes: [
    { mailboxId: 1001, inbox: { dir: '/srv/gs/in' }, outbox: { dir: '/srv/gs/out', sentDir: '/srv/gs/sent', errorDir: '/srv/gs/err' } },
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

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe('folders: one role each, never nested', () => {
  it('side-by-side folders pass; staging and processing may live in stateDir', () => {
    const raw = base();
    raw.mailboxes[0].inbox.stagingDir = '/srv/gs/state/staging-in';
    raw.mailboxes[0].outbox.processingDir = '/srv/gs/state/processing-out';
    expect(() => parseConfig(raw, 'test.yaml', {}, '/etc/gridsync')).not.toThrow();
  });

  it('inbox = outbox = sentDir = errorDir (the reported case) is refused, naming two keys', () => {
    const raw = base();
    const m = raw.mailboxes[0];
    m.inbox.dir = m.outbox.dir = m.outbox.sentDir = m.outbox.errorDir = '/srv/gs/all';
    const e = errorOf(raw);
    expect(e.message).toMatch(/mailboxes\[0\]\.inbox\.dir and mailboxes\[0\]\.outbox\.dir are the same folder \(\/srv\/gs\/all\)/);
    expect(e.key).toBe('mailboxes[0].inbox.dir');
  });

  it('errorDir equal to the outbox', () => {
    const raw = base();
    raw.mailboxes[0].outbox.errorDir = '/srv/gs/out/';
    expect(errorOf(raw).message).toMatch(/outbox\.dir and mailboxes\[0\]\.outbox\.errorDir are the same folder/);
  });

  it('sentDir nested inside the outbox', () => {
    const raw = base();
    raw.mailboxes[0].outbox.sentDir = '/srv/gs/out/sent';
    expect(errorOf(raw).message).toMatch(
      /mailboxes\[0\]\.outbox\.sentDir \(\/srv\/gs\/out\/sent\) is inside mailboxes\[0\]\.outbox\.dir \(\/srv\/gs\/out\)/,
    );
  });

  it('the inbox of one mailbox is the outbox of another', () => {
    const raw = base();
    raw.mailboxes.push({ mailboxId: 1002, inbox: { dir: '/srv/gs/out' } });
    expect(errorOf(raw).message).toMatch(/mailboxes\[0\]\.outbox\.dir and mailboxes\[1\]\.inbox\.dir are the same folder/);
  });

  it('an inbox inside stateDir', () => {
    const raw = base();
    raw.mailboxes[0].inbox.dir = '/srv/gs/state/in';
    expect(errorOf(raw).message).toMatch(/inbox\.dir .* is inside stateDir/);
  });

  it('relative paths resolve against the config directory before comparing', () => {
    const raw = base();
    raw.mailboxes[0].inbox.dir = './x';
    raw.mailboxes[0].outbox.errorDir = '/etc/gridsync/x/../x';
    expect(errorOf(raw).message).toMatch(/are the same folder \(\/etc\/gridsync\/x\)/);
  });

  it('an alias through a symlink counts as the same folder', () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-folders-'));
    dirs.push(d);
    fs.mkdirSync(path.join(d, 'out'));
    fs.symlinkSync(path.join(d, 'out'), path.join(d, 'alias'));
    const raw = base();
    raw.mailboxes[0].outbox.dir = path.join(d, 'out');
    raw.mailboxes[0].outbox.errorDir = path.join(d, 'alias', 'err');
    expect(errorOf(raw).message).toMatch(/outbox\.errorDir .* is inside mailboxes\[0\]\.outbox\.dir/);
  });
});
