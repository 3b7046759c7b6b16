// An ERP may take a batch by moving the inbox folder away and making a new one at its path
// (`mv inbox batch && mkdir inbox`), then work through and remove the folder it took. The
// inbox root is held open for a whole cycle, so every parcel placed after such a move, for the
// rest of the cycle (seconds in a burst), went into the folder the ERP had already taken — and was
// confirmed. A parcel now goes where the inbox path leads when it is placed; a parcel placed before
// the move stays in the taken folder with its done marker beside it. The built CLI, stopped at
// the second placement (`in.before-rename:2`) while the test moves the folder.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '@gridsync/emulator';
import { eventually, startCli } from '../../helpers/daemon-child.js';
import { makeDaemonWorld, type DaemonWorld } from '../../helpers/daemon-config.js';
import { emulatorParcels, listFiles } from '../../helpers/world.js';

let emu: Emulator;
let w: DaemonWorld | undefined;
beforeEach(async () => {
  emu = await startEmulator({ port: 0 });
});
afterEach(async () => {
  await emu.close();
  w?.cleanup();
  w = undefined;
});

describe('the inbox moved away and made again in the middle of a cycle', () => {
  it('the parcels placed after the move go into the new inbox, each with its marker beside it', async () => {
    w = makeDaemonWorld(
      { api: { baseUrl: emu.url, apiKey: 'demo-key-1001' } },
      { inbox: { dir: './inbox', doneMarker: true, concurrency: 1 }, outbox: undefined },
    );
    const { inbox } = w;
    const taken = path.join(w.dir, 'batch');
    const contents = ['ISA*one~', 'ISA*two~', 'ISA*three~'];
    for (const [i, c] of contents.entries()) await emu.inject({ mailboxId: 1001, fileName: `p${i}.x12`, content: Buffer.from(c) });
    const child = startCli(['once', '-c', w.configFile], { GRIDSYNC_PAUSE_AT: 'in.before-rename:2' });
    try {
      await child.waitFor(/pause point in\.before-rename reached/, 30_000);
      await eventually(() => /^\d+ \(.*\) T/.test(fs.readFileSync(`/proc/${child.pid}/stat`, 'utf8')), 10_000, 'the child stopped');
      fs.renameSync(inbox, taken);
      fs.mkdirSync(inbox);
      child.kill('SIGCONT');
      const r = await child.exited;
      expect(r.code, r.stderr).toBe(0);
    } finally {
      child.kill('SIGKILL');
      await child.exited;
    }
    const parcelsIn = (d: string): string[] => listFiles(d).filter((f) => !f.endsWith('.done'));
    const markersIn = (d: string): string[] => listFiles(d).filter((f) => f.endsWith('.done'));
    expect(parcelsIn(taken), 'the folder the ERP took holds only what was placed before').toHaveLength(1);
    expect(parcelsIn(inbox)).toHaveLength(2);
    for (const d of [taken, inbox]) expect(markersIn(d)).toEqual(parcelsIn(d).map((f) => `${f}.done`));
    const all = [...parcelsIn(taken).map((f) => path.join(taken, f)), ...parcelsIn(inbox).map((f) => path.join(inbox, f))];
    expect(all.map((f) => fs.readFileSync(f, 'utf8')).sort()).toEqual([...contents].sort());
    expect((await emulatorParcels(emu, 1001)).map((p) => p.status)).toEqual(['InBoxTransferred', 'InBoxTransferred', 'InBoxTransferred']);
  }, 90_000);
});
