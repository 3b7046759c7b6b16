// The emulator is a package of its own that the daemon loads only when asked for: a `once` against
// a service elsewhere never brings its code into memory, one with `baseUrl: embedded` does. Seen
// from outside: the built CLI runs in a child process whose every module load is recorded.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '@gridsync/emulator';
import { makeDaemonWorld, type DaemonWorld } from '../../helpers/daemon-config.js';
import { cliPath } from '../../helpers/daemon-child.js';
import { repoRoot } from '../../helpers/journal-child.js';

const hook = path.join(repoRoot, 'test/helpers/module-loads.mjs');
const worlds: DaemonWorld[] = [];
let emu: Emulator;

beforeAll(async () => {
  emu = await startEmulator({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await emu.close();
  worlds.forEach((w) => w.cleanup());
});

/** Runs `gridsync once` (asynchronously: the emulator above answers from this process) and returns the module URLs it loaded. */
async function loadsOfOnce(baseUrl: string): Promise<string[]> {
  const w = makeDaemonWorld({ api: { baseUrl, apiKey: 'demo-key-1001' } });
  worlds.push(w);
  const loads = path.join(w.dir, 'loads.txt');
  await new Promise<void>((resolve, reject) => {
    execFile(
      process.execPath,
      ['--import', hook, cliPath, 'once', '-c', w.configFile],
      { env: { ...process.env, GRIDSYNC_TEST_LOADS_FILE: loads }, timeout: 60_000 },
      (err, _stdout, stderr) => (err ? reject(new Error(`once failed: ${stderr}`)) : resolve()),
    );
  });
  return fs.readFileSync(loads, 'utf8').split('\n').filter(Boolean);
}

const under = (urls: string[], pkg: string): string[] => urls.filter((u) => u.includes(`/packages/${pkg}/`));

describe('the emulator is loaded only on demand', () => {
  it('a once against a service elsewhere loads the protocol but none of the emulator', async () => {
    const urls = await loadsOfOnce(emu.url);
    expect(under(urls, 'protocol').length).toBeGreaterThan(0);
    expect(under(urls, 'emulator')).toEqual([]);
  });

  it('a once with baseUrl: embedded loads it', async () => {
    const urls = await loadsOfOnce('embedded');
    expect(under(urls, 'emulator').some((u) => u.endsWith('/packages/emulator/dist/index.js'))).toBe(true);
  });
});
