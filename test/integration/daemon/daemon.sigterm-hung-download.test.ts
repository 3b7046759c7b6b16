// SIGTERM while the service holds a download and never answers, with parcels still queued behind
// it. The stop aborted the download at shutdownTimeout, but each queued parcel then started its
// own download under the already-aborted signal, which no longer aborted anything: `gridsync run`
// waited a rate window (30 s) per parcel left, far past shutdownTimeout — systemd's stop timeout
// or `docker stop` ended it with SIGKILL instead.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmulator } from '@gridsync/emulator';
import { eventually, startCli } from '../../helpers/daemon-child.js';
import { countInJournal } from '../../helpers/journal-count.js';

const PARCELS = 5;

/** Parcels the journal holds as listed: no download of theirs has succeeded. */
const listedRows = (dir: string): number =>
  countInJournal(path.join(dir, 'state'), "SELECT count(*) AS n FROM inbound_parcels WHERE state = 'listed'");

describe('daemon: SIGTERM while the service holds a download', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('stops within shutdownTimeout, not a rate window per queued parcel; nothing placed or confirmed', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-sigterm-hung-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const emu = await startEmulator({ port: 0 });
    cleanups.push(() => emu.close());
    for (let i = 0; i < PARCELS; i++) {
      await emu.inject({ mailboxId: 1001, fileName: `order-${i}.x12`, content: Buffer.from(`ISA*${i}~`) });
    }
    emu.setFaults({ rules: [{ endpoint: 'parcels.download', latencyMs: 600_000 }] });
    const configFile = path.join(dir, 'gridsync.yaml');
    fs.writeFileSync(
      configFile,
      YAML.stringify({
        api: { baseUrl: emu.url, apiKey: 'demo-key-1001' },
        stateDir: 'state',
        log: { level: 'info', pretty: false },
        schedule: { poll: '1s' },
        shutdownTimeout: '500ms',
        mailboxes: [{ mailboxId: 1001, inbox: { dir: 'inbox', concurrency: 1 } }],
      }),
    );
    fs.mkdirSync(path.join(dir, 'inbox'));
    const child = startCli(['run', '-c', configFile]);
    cleanups.push(() => child.kill('SIGKILL'));
    await child.waitFor(/"msg":"gridsync started"/);
    await eventually(() => listedRows(dir) === PARCELS, 15_000, 'the parcels listed');
    await new Promise((r) => setTimeout(r, 300)); // the first download goes out right after the listing

    child.kill('SIGTERM');
    const exit = await Promise.race([
      child.exited,
      new Promise<'still running'>((r) => setTimeout(() => r('still running'), 20_000).unref()),
    ]);
    expect(exit).not.toBe('still running');
    if (exit === 'still running') return;
    expect(exit.code).toBe(0);
    expect(exit.stdout).toMatch(/"msg":"shutdown deadline reached; aborting in-flight transfers/);
    expect(exit.stdout).toMatch(/"msg":"gridsync stopped"/);
    expect(fs.readdirSync(path.join(dir, 'inbox'))).toEqual([]);
    expect(emu.requests().filter((r) => r.endpoint === 'parcels.confirm')).toEqual([]);
  });
});
