// Config files for daemon and CLI tests: a temp dir with the folders of one mailbox.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';

export interface DaemonWorld {
  readonly dir: string;
  readonly configFile: string;
  readonly inbox: string;
  readonly outbox: string;
  readonly sent: string;
  readonly error: string;
  readonly state: string;
  cleanup(): void;
}

/** Writes `gridsync.yaml` into a fresh temp dir; `extra` is merged over the defaults. */
export function makeDaemonWorld(extra: Record<string, unknown> = {}, mailboxExtra: Record<string, unknown> = {}): DaemonWorld {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-daemon-'));
  const w = {
    dir,
    configFile: path.join(dir, 'gridsync.yaml'),
    inbox: path.join(dir, 'inbox'),
    outbox: path.join(dir, 'outbox'),
    sent: path.join(dir, 'sent'),
    error: path.join(dir, 'error'),
    state: path.join(dir, 'state'),
    cleanup: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
  const config = {
    api: { baseUrl: 'embedded', apiKey: 'demo-key-1001' },
    stateDir: './state',
    log: { level: 'warn', pretty: false },
    schedule: { poll: '200ms' },
    mailboxes: [
      {
        mailboxId: 1001,
        inbox: { dir: './inbox' },
        outbox: { dir: './outbox', sentDir: './sent', errorDir: './error', stableMs: '100ms', rescanMs: '500ms' },
        ...mailboxExtra,
      },
    ],
    ...extra,
  };
  fs.writeFileSync(w.configFile, YAML.stringify(config));
  return w;
}
