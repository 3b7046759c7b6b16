/**
 * `gridsync requeue` and `gridsync redeliver` write to the configured journal — the embedded SQLite
 * file, or the PostgreSQL database `journal.url` names — from the outside: the built CLI in child
 * processes, an emulator in this process, a real PostgreSQL started by the test. They held the
 * SQLite file whatever the configuration said: with PostgreSQL they made a stray journal.sqlite in
 * stateDir, `requeue --force` had no effect (the file was refused as a duplicate again), a plain
 * requeue left the row in_error, and a redelivery asked for was lost (a parcel whose confirm was
 * not yet seen to take was confirmed again instead of delivered).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '@gridsync/emulator';
import { openJournal, REDELIVERY_REQUESTED } from '../../../src/journal/index.js';
import { startCli } from '../../helpers/daemon-child.js';
import { x12 } from '../../helpers/edi.js';
import { postgresForFile } from '../../helpers/postgres.js';
import { emulatorParcels } from '../../helpers/world.js';

const server = postgresForFile('requeue and redeliver on a PostgreSQL journal are not tested');
const MB = 1001;
/** A PostgreSQL journal's lease: above the 1 s self-fencing margin, short for a killed run's to expire. */
const LEASE = '3s';

interface Backend {
  readonly name: 'sqlite' | 'postgres';
  /** The config's `journal` section: none for SQLite; for PostgreSQL a fresh database, leases short enough to outlive a killed run. */
  journal(): Promise<Record<string, unknown> | undefined>;
}

let databases = 0;
const backends: Backend[] = [
  { name: 'sqlite', journal: async () => undefined },
  ...(server.available
    ? [
        {
          name: 'postgres' as const,
          journal: async () => ({ url: await server.createDatabase(`operator_${++databases}`), lease: LEASE, renew: '750ms' }),
        },
      ]
    : []),
];

interface World {
  readonly dir: string;
  readonly config: string;
  readonly where: { url: string | undefined; stateDir: string };
  readonly emu: Emulator;
  readonly folder: (name: 'inbox' | 'outbox' | 'sent' | 'error') => string;
}

const worlds: World[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) {
    await w.emu.close();
    fs.rmSync(w.dir, { recursive: true, force: true });
  }
});

async function makeWorld(backend: Backend): Promise<World> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-operator-'));
  const folder = (name: string): string => path.join(dir, name);
  const emu = await startEmulator({ settings: { acknowledgeDelayMs: 0 } });
  const journal = await backend.journal();
  const config = path.join(dir, 'gridsync.yaml');
  fs.writeFileSync(
    config,
    YAML.stringify({
      api: { baseUrl: emu.url, apiKey: 'demo-key-1001' },
      stateDir: folder('state'),
      ...(journal ? { journal } : {}),
      log: { level: 'warn', pretty: false },
      mailboxes: [
        {
          mailboxId: MB,
          inbox: { dir: folder('inbox') },
          outbox: { dir: folder('outbox'), sentDir: folder('sent'), errorDir: folder('error'), stableMs: '50ms' },
        },
      ],
    }),
    // It holds the API key: as an operator keeps it (0644 is warned about on stderr).
    { mode: 0o600 },
  );
  const w = { dir, config, where: { url: journal?.url as string | undefined, stateDir: folder('state') }, emu, folder };
  worlds.push(w);
  return w;
}

/** The built CLI, in a child this process does not block on: the emulator answers it from here. */
const cli = (w: World, args: string[], env: Record<string, string> = {}) => startCli([...args, '-c', w.config], env).exited;

async function outboundCounts(w: World): Promise<Record<string, number>> {
  const r = await cli(w, ['status', '--json']);
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { outbound: { counts: Record<string, number> } }).outbound.counts;
}

/** The journal's own trail, read as the daemon reads it. */
async function events(w: World, toState: string): Promise<Record<string, unknown>[]> {
  const journal = await openJournal(w.where, { readonly: true });
  try {
    return await journal.all(
      'SELECT direction, mailbox_id, item, from_state, to_state, detail FROM events WHERE to_state = ? ORDER BY id',
      toState,
    );
  } finally {
    await journal.close();
  }
}

const stray = (w: World): boolean => w.where.url !== undefined && fs.existsSync(path.join(w.where.stateDir, 'journal.sqlite'));

describe.each(backends)('operator commands on the $name journal', (backend) => {
  it('requeue marks the row requeued; requeue --force has the next cycle send the duplicate anyway', async () => {
    const w = await makeWorld(backend);
    const content = x12(77);
    fs.mkdirSync(w.folder('outbox'), { recursive: true });
    fs.writeFileSync(path.join(w.folder('outbox'), 'first.x12'), content);
    expect((await cli(w, ['once'])).code).toBe(0);
    fs.writeFileSync(path.join(w.folder('outbox'), 'again.x12'), content);
    expect((await cli(w, ['once'])).code).toBe(1);
    expect(fs.readFileSync(path.join(w.folder('error'), 'again.x12.error.json'), 'utf8')).toMatch(/OUTBOUND_DUPLICATE/);

    const plain = await cli(w, ['requeue', 'again.x12']);
    expect(plain.code, plain.stderr).toBe(0);
    expect(await outboundCounts(w)).toEqual({ archived: 1, requeued: 1 });
    expect((await cli(w, ['once'])).code).toBe(1);
    expect(await outboundCounts(w)).toEqual({ archived: 1, requeued: 1, in_error: 1 });

    const forced = await cli(w, ['requeue', '--force', 'again.x12']);
    expect(forced.code, forced.stderr).toBe(0);
    expect(await events(w, 'requeued')).toEqual([
      { direction: 'out', mailbox_id: MB, item: '2', from_state: 'in_error', to_state: 'requeued', detail: null },
      { direction: 'out', mailbox_id: MB, item: '3', from_state: 'in_error', to_state: 'requeued', detail: '{"force":true}' },
    ]);
    expect((await cli(w, ['once'])).code).toBe(0);
    expect(fs.readdirSync(w.folder('sent')).sort()).toEqual(['again.x12', 'first.x12']);
    const sent = (await emulatorParcels(w.emu, MB)).filter((p) => p.direction === 'out');
    expect(sent.map((p) => p.sha256)).toEqual([sent[0]?.sha256, sent[0]?.sha256]);
    expect(stray(w), 'a stray SQLite journal in stateDir').toBe(false);
  });

  it('redeliver notes the reset in the journal: a parcel whose confirm was not yet seen to take is delivered again', async () => {
    const w = await makeWorld(backend);
    const id = await w.emu.inject({ mailboxId: MB, fileName: 'po.x12', content: Buffer.from(x12(78)) });
    // Killed right after the confirm is journalled: the confirm is not yet seen to take.
    expect((await cli(w, ['once'], { GRIDSYNC_CRASH_AT: 'in.confirmed' })).signal).toBe('SIGKILL');
    expect(fs.readdirSync(w.folder('inbox'))).toEqual(['po.x12']);

    const r = await cli(w, ['redeliver', String(id)]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(await events(w, REDELIVERY_REQUESTED)).toEqual([
      {
        direction: 'in',
        mailbox_id: null,
        item: String(id),
        from_state: null,
        to_state: REDELIVERY_REQUESTED,
        detail: '{"by":"gridsync redeliver"}',
      },
    ]);
    // The killed run's lease (PostgreSQL) expires first; a second run at once would skip the mailbox.
    if (w.where.url) await new Promise((resolve) => setTimeout(resolve, 3_500));
    const again = await cli(w, ['once', '--log-level', 'info']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/redelivered on request/);
    expect(fs.readdirSync(w.folder('inbox'))).toHaveLength(2);
    expect(stray(w), 'a stray SQLite journal in stateDir').toBe(false);
  });
});
