// The documented production setup, as systemd runs it: config with `apiKeyFile: /etc/gridsync/api-key`
// (root, 0600), the unit runs as an unprivileged user with LoadCredential= (the key copied into
// $CREDENTIALS_DIRECTORY, readable by that user). gridsync exited 2 "cannot read … EACCES": the
// credential was never tried because the key file won. Run here as root dropping to `nobody`
// with setpriv; skipped with a notice when not root.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { cliPath } from '../../helpers/daemon-child.js';
import { x12 } from '../../helpers/edi.js';
import { isRoot, prerequisite, runs } from '../../helpers/require-tool.js';

const canDrop = prerequisite(
  'root and setpriv',
  isRoot && runs('setpriv', '--version'),
  'once as nobody with a root-only key file is not checked',
);

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe('systemd credential under an unprivileged service user', () => {
  it.skipIf(!canDrop)('once starts and syncs as nobody with the root-only key file named in the config', () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-cred-'));
    dirs.push(d);
    fs.chmodSync(d, 0o755);
    const keyFile = path.join(d, 'api-key');
    fs.writeFileSync(keyFile, 'demo-key-1001\n', { mode: 0o600 }); // root's, as installed
    const creds = path.join(d, 'credentials');
    fs.mkdirSync(creds, { mode: 0o500 });
    fs.copyFileSync(keyFile, path.join(creds, 'gridsync-api-key'));
    fs.chmodSync(path.join(creds, 'gridsync-api-key'), 0o400);
    const data = path.join(d, 'srv');
    fs.mkdirSync(data);
    fs.mkdirSync(path.join(data, 'outbox'));
    fs.writeFileSync(path.join(data, 'outbox', 'po.x12'), x12(501));
    for (const p of [creds, path.join(creds, 'gridsync-api-key'), data, path.join(data, 'outbox'), path.join(data, 'outbox', 'po.x12')])
      fs.chownSync(p, 65534, 65534);
    const config = path.join(d, 'gridsync.yaml');
    fs.writeFileSync(
      config,
      YAML.stringify({
        api: { baseUrl: 'embedded', apiKeyFile: keyFile },
        stateDir: './srv/state',
        log: { level: 'warn', pretty: false },
        mailboxes: [
          {
            mailboxId: 1001,
            inbox: { dir: './srv/inbox' },
            outbox: { dir: './srv/outbox', sentDir: './srv/sent', errorDir: './srv/error', stableMs: 0 },
          },
        ],
      }),
      { mode: 0o644 },
    );
    const asNobody = (env: Record<string, string>) =>
      spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, cliPath, 'once', '-c', config], {
        cwd: d,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
        encoding: 'utf8',
        timeout: 60_000,
      });
    // Without the credential the user cannot read the key: a clear exit 2, no stack trace.
    const without = asNobody({});
    expect(without.status).toBe(2);
    expect(without.stderr).toMatch(/api\.apiKeyFile: cannot read .*api-key/);
    expect(without.stderr).not.toMatch(/\n\s+at /);

    const withCredential = asNobody({ CREDENTIALS_DIRECTORY: creds });
    expect(withCredential.stderr + withCredential.stdout).toBe('');
    expect(withCredential.status).toBe(0);
    expect(fs.readdirSync(path.join(data, 'sent'))).toEqual(['po.x12']);
    expect(fs.statSync(path.join(data, 'state', 'journal.sqlite')).uid).toBe(65534);
  });
});
