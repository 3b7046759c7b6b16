// `once --dry-run`: what would be received and sent, and nothing changes — no journal, no folder,
// no file moved, no parcel downloaded or confirmed (a real once afterwards still finds them all).
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmulator } from '@gridsync/emulator';
import { makeDaemonWorld, seedEmbeddedService, type DaemonWorld } from '../../helpers/daemon-config.js';
import { runCli } from '../../helpers/daemon-child.js';
import { x12 } from '../../helpers/edi.js';
import { emulatorParcels } from '../../helpers/world.js';

const worlds: DaemonWorld[] = [];
afterEach(() => worlds.splice(0).forEach((w) => w.cleanup()));

describe('once --dry-run', () => {
  it('lists the pending parcels and the outbox files, changes nothing', async () => {
    const w = makeDaemonWorld();
    worlds.push(w);
    await seedEmbeddedService(w, [
      { fileName: 'in-a.x12', content: 'ISA*a~' },
      { fileName: 'in-b.x12', content: 'ISA*bb~' },
    ]);
    fs.mkdirSync(w.outbox, { recursive: true });
    fs.writeFileSync(path.join(w.outbox, 'out-1.x12'), x12(1));
    fs.writeFileSync(path.join(w.outbox, 'out-2.x12'), x12(2));
    fs.writeFileSync(path.join(w.outbox, 'half.tmp'), 'being written');

    const r = runCli(['once', '-c', w.configFile, '--dry-run', '--json']);
    expect(r.status).toBe(0);
    const report = JSON.parse(r.stdout) as { mailboxes: { receive: { fileName: string }[]; send: { file: string }[] }[] };
    expect(report.mailboxes[0]?.receive.map((p) => p.fileName).sort()).toEqual(['in-a.x12', 'in-b.x12']);
    expect(report.mailboxes[0]?.send.map((f) => f.file)).toEqual(['out-1.x12', 'out-2.x12']);
    expect(runCli(['once', '-c', w.configFile, '--dry-run']).stdout).toMatch(
      /mb1001: would receive 2 parcel\(s\)[\s\S]*mb1001: would send 2 file\(s\)/,
    );

    // Nothing changed.
    expect(fs.existsSync(w.state)).toBe(false);
    expect(fs.existsSync(w.inbox)).toBe(false);
    expect(fs.existsSync(w.sent)).toBe(false);
    expect(fs.readdirSync(w.outbox).sort()).toEqual(['half.tmp', 'out-1.x12', 'out-2.x12']);
    const real = runCli(['once', '-c', w.configFile]);
    expect(real.status).toBe(0);
    expect(fs.readdirSync(w.inbox).sort()).toEqual(['in-a.x12', 'in-b.x12']);
    expect(fs.readdirSync(w.sent).sort()).toEqual(['out-1.x12', 'out-2.x12']);
  });

  it('lists what a killed run left unfinished — a staged parcel, a file in processing/ — and the real run finishes each once', async () => {
    const w = makeDaemonWorld();
    worlds.push(w);
    const { dataFile } = await seedEmbeddedService(w, [{ fileName: 'in-a.x12', content: 'ISA*a~' }]);
    type Report = {
      mailboxes: {
        receive: { fileName: string }[];
        send: { file: string }[];
        unfinished?: { direction: string; file: string; state: string; next: string }[];
      }[];
    };
    const dryRun = (): Report => {
      const r = runCli(['once', '-c', w.configFile, '--dry-run', '--json']);
      expect(r.status, r.stderr).toBe(0);
      return JSON.parse(r.stdout) as Report;
    };

    // Killed after the parcel's content was staged and journalled, before it was placed.
    expect(runCli(['once', '-c', w.configFile], { GRIDSYNC_CRASH_AT: 'in.staged' }).signal).toBe('SIGKILL');
    let m = dryRun().mailboxes[0];
    expect(m?.receive).toEqual([]); // still pending on the service, but not downloaded again
    expect(m?.unfinished).toEqual([
      expect.objectContaining({ direction: 'in', state: 'staged', next: expect.stringMatching(/into the inbox, then confirmed/) }),
    ]);
    expect(m?.unfinished?.[0]?.file.startsWith(w.state)).toBe(true);

    // Killed after a file was claimed into processing/, before it was sent (the parcel is finished first).
    fs.mkdirSync(w.outbox, { recursive: true });
    fs.writeFileSync(path.join(w.outbox, 'out-1.x12'), x12(1));
    expect(runCli(['once', '-c', w.configFile], { GRIDSYNC_CRASH_AT: 'out.claimed' }).signal).toBe('SIGKILL');
    expect(fs.readdirSync(w.inbox)).toEqual(['in-a.x12']);
    m = dryRun().mailboxes[0];
    expect(m?.send).toEqual([]); // no longer in the outbox
    expect(m?.unfinished).toEqual([expect.objectContaining({ direction: 'out', state: 'claimed', next: 'checked and sent' })]);
    const inProcessing = m?.unfinished?.[0]?.file ?? '';
    expect(fs.existsSync(inProcessing)).toBe(true);
    expect(path.basename(inProcessing)).toMatch(/out-1\.x12$/);
    const text = runCli(['once', '-c', w.configFile, '--dry-run']).stdout;
    expect(text).toMatch(
      /mb1001: 1 item\(s\) an earlier run left unfinished[\s\S]*out {2}file #\d+ {2}\S*out-1\.x12 {2}\[claimed\]: checked and sent/,
    );

    expect(runCli(['once', '-c', w.configFile]).status).toBe(0);
    expect(fs.readdirSync(w.sent)).toEqual(['out-1.x12']);
    expect(dryRun().mailboxes[0]?.unfinished).toBeUndefined();
    const check = await startEmulator({ port: 0, dataFile, admin: true });
    try {
      const ours = await emulatorParcels(check, 1001);
      expect(ours.filter((p) => p.direction === 'out').map((p) => p.fileName)).toEqual(['out-1.x12']);
      // (The partner's 997 acknowledgement of out-1 is waiting in the inbox too: a parcel of its own.)
      expect(ours.filter((p) => p.fileName === 'in-a.x12').map((p) => p.status)).toEqual(['InBoxTransferred']);
    } finally {
      await check.close();
    }
  });
});
