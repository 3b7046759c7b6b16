// Config files for daemon and CLI tests: a temp dir with the folders of one mailbox.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { startEmulator } from '@gridsync/emulator';

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

/**
 * The world's embedded emulator keeps its data in a file of its own (`emulator.dataFile`), with
 * these parcels waiting in mailbox 1001's inbox: the CLI runs of a test share one service, and the
 * test can open the emulator on the file again to look. `configure` edits the rest of the
 * configuration. Returns the data file and the parcels' ids.
 */
export async function seedEmbeddedService(
  w: DaemonWorld,
  parcels: readonly { fileName: string; content: string }[],
  configure: (c: Record<string, any>) => void = () => {},
): Promise<{ dataFile: string; ids: number[] }> {
  const dataFile = path.join(w.dir, 'emulator.sqlite');
  const c = YAML.parse(fs.readFileSync(w.configFile, 'utf8')) as Record<string, any>;
  c.emulator = { dataFile };
  configure(c);
  fs.writeFileSync(w.configFile, YAML.stringify(c));
  const emu = await startEmulator({ port: 0, dataFile });
  try {
    const ids: number[] = [];
    for (const p of parcels) ids.push(await emu.inject({ mailboxId: 1001, fileName: p.fileName, content: Buffer.from(p.content) }));
    return { dataFile, ids };
  } finally {
    await emu.close();
  }
}
