// A fresh world per test: an emulator on 127.0.0.1, a client, a journal, temp folders.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { GridClient, SoapClient, type MailboxTransport } from '../../src/api/index.js';
import { DEFAULTS } from '../../src/config/defaults.js';
import { startEmulator, type Emulator, type EmulatorOptions } from '@gridsync/emulator';
import type { InboxConfig } from '../../src/inbound/index.js';
import { Journal } from '../../src/journal/index.js';
import { OutboundPipeline, type OutboundPipelineOptions, type OutboxConfig } from '../../src/outbound/index.js';

export interface TestWorld {
  readonly root: string;
  readonly dirs: Record<'inbox' | 'outbox' | 'sent' | 'error' | 'state', string>;
  readonly emu: Emulator;
  /** REST or SOAP: the pipelines see only the transport interface. */
  readonly client: MailboxTransport;
  readonly journal: Journal;
  close(): Promise<void>;
}

export type Protocol = 'rest' | 'soap';

export async function makeWorld(
  emulatorOptions: EmulatorOptions = {},
  apiKey = 'demo-key-1001',
  protocol: Protocol = 'rest',
): Promise<TestWorld> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-test-'));
  const dirs = {
    inbox: path.join(root, 'inbox'),
    outbox: path.join(root, 'outbox'),
    sent: path.join(root, 'sent'),
    error: path.join(root, 'error'),
    state: path.join(root, 'state'),
  };
  for (const d of Object.values(dirs)) fs.mkdirSync(d, { recursive: true });
  const emu = await startEmulator({ settings: { acknowledgeDelayMs: 0 }, ...emulatorOptions });
  const client: MailboxTransport =
    protocol === 'soap'
      ? new SoapClient({ url: emu.url, auth: { apiKey }, sleep: async () => undefined })
      : new GridClient({ baseUrl: emu.url, auth: { apiKey }, sleep: async () => undefined });
  const journal = Journal.open(path.join(dirs.state, 'journal.sqlite'));
  return {
    root,
    dirs,
    emu,
    client,
    journal,
    async close() {
      await client.close();
      await journal.close();
      await emu.close();
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
}

/** All files under `dir`, relative paths. */
export function listFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.push(path.relative(dir, p));
    }
  };
  if (fs.existsSync(dir)) walk(dir);
  return out.sort();
}

export async function emulatorParcels(emu: Emulator, mailboxId: number): Promise<Array<Record<string, unknown>>> {
  const res = await fetch(`${emu.url}/_emulator/parcels?mailboxId=${mailboxId}`);
  return ((await res.json()) as { data: Array<Record<string, unknown>> }).data;
}

/** An inbox configuration on `dir`: the product's defaults, no free-space reserve, 3 attempts. */
export function inboxConfig(dir: string, over: Partial<InboxConfig> = {}): InboxConfig {
  return { ...(DEFAULTS.inbox as Omit<InboxConfig, 'dir'>), dir, maxAttempts: 3, minFreeBytes: 0, ...over };
}

/** An outbound pipeline for mailbox 1001 on the world's folders, with test-friendly defaults. */
export function outboundPipeline(
  w: Pick<TestWorld, 'client' | 'journal' | 'dirs'>,
  over: Partial<OutboxConfig> = {},
  options: Pick<OutboundPipelineOptions, 'now' | 'logger' | 'sleep'> = {},
): OutboundPipeline {
  // The product's defaults, with only what a test needs sooner: files are finished after 50 ms, and
  // the periodic rescan stays out of the way of tests that trigger cycles themselves.
  const outbox: OutboxConfig = {
    ...DEFAULTS.outbox,
    ignore: [...DEFAULTS.outbox.ignore],
    dir: w.dirs.outbox,
    sentDir: w.dirs.sent,
    errorDir: w.dirs.error,
    stableMs: 50,
    rescanMs: 60_000,
    ...over,
  };
  return new OutboundPipeline({
    client: w.client,
    journal: w.journal,
    mailbox: { mailboxId: 1001, name: 'mb1001', outbox },
    stateDir: w.dirs.state,
    ...options,
  });
}
