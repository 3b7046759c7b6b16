// `gridsync emulator --data FILE` where FILE cannot serve as its store: a directory, a file that is
// not SQLite. Before: exit 3, a bug, in SQLite's words without the path ("unable to open database
// file [SQLITE_CANTOPEN]", "file is not a database"); now exit 2 with EMULATOR_CONFIG and the path.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { cliPath, startCli } from '../../helpers/daemon-child.js';

function emulatorOn(data: string) {
  return spawnSync(process.execPath, [cliPath, 'emulator', '--port', '0', '--data', data], { encoding: 'utf8', timeout: 20_000 });
}

describe('emulator data file that cannot serve', () => {
  it('a directory, a file that is not SQLite: exit 2, one line naming it, EMULATOR_CONFIG', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-emu-data-'));
    onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
    const folder = emulatorOn(dir);
    expect(folder.status).toBe(2);
    expect(folder.stderr).toBe(
      `gridsync: data file ${dir} cannot be opened (a directory, or in a folder that cannot be written?) [EMULATOR_CONFIG]\n`,
    );

    const text = path.join(dir, 'notes.txt');
    fs.writeFileSync(text, 'not a database, but long enough to be read as a header by SQLite\n'.repeat(4));
    const notDb = emulatorOn(text);
    expect(notDb.status).toBe(2);
    expect(notDb.stderr).toBe(`gridsync: data file ${text} is not an SQLite database (another file at that path?) [EMULATOR_CONFIG]\n`);
    expect(fs.readFileSync(text, 'utf8')).toMatch(/^not a database/);
  });

  it('SIGTERM the moment "listening on" is printed: the store is closed and the exit is 0, every time', async () => {
    // The line came before the handler of SIGTERM: a supervisor or test that signalled on seeing it
    // ended the process by the default action (3 runs in 5 here), its data file not closed.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-emu-data-'));
    onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
    for (let i = 0; i < 5; i++) {
      const emu = startCli(['emulator', '--port', '0', '--data', path.join(dir, 'emulator.sqlite')]);
      await emu.waitFor(/listening on/);
      emu.kill('SIGTERM');
      expect(await emu.exited).toMatchObject({ code: 0, signal: null });
    }
  });
});
