// What `gridsync run` (the built CLI) logs through a service outage: the service stops, cycles fail
// on the backoff, the service comes back on its data file. Before, every failed cycle was an error
// line (a night's outage: one every 5 minutes, each paging whoever watches errors); now one error
// line when the outage starts, with its code, the repetitions at debug, and one line when it ends
// saying how long it lasted and how many cycles failed.
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '@gridsync/emulator';
import { makeDaemonWorld } from '../../helpers/daemon-config.js';
import { startCli } from '../../helpers/daemon-child.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Line {
  level: number;
  msg: string;
  [k: string]: unknown;
}

const FAILED = 'cycle failed; retrying with backoff';
const ENDED = 'the service answers again; back to the normal schedule';

describe('run through a service outage', () => {
  it('one error line when it starts, debug while it lasts, one info line when it is over', async () => {
    const w = makeDaemonWorld();
    cleanups.push(() => w.cleanup());
    const dataFile = path.join(w.dir, 'emulator.sqlite');
    let emu: Emulator = await startEmulator({ port: 0, dataFile });
    cleanups.push(() => emu.close());
    const port = Number(new URL(emu.url).port);
    const config = YAML.parse(fs.readFileSync(w.configFile, 'utf8')) as Record<string, unknown>;
    // One attempt per call and a short connect timeout: a failed cycle is the cycle's doing alone.
    config.api = { baseUrl: emu.url, apiKey: 'demo-key-1001', maxAttempts: 1, timeouts: { connectMs: '500ms' } };
    config.log = { level: 'debug', pretty: false };
    fs.writeFileSync(w.configFile, YAML.stringify(config), { mode: 0o600 });

    const run = startCli(['run', '-c', w.configFile]);
    cleanups.push(async () => {
      run.kill('SIGKILL');
      await run.exited;
    });
    await run.waitFor(/"msg":"gridsync started"/);
    await emu.close();
    // The backoff doubles from 1 s: a fourth failed cycle comes about 7 s into the outage.
    await run.waitFor(/"failures":4,/, 30_000);
    emu = await startEmulator({ port, dataFile });
    await emu.inject({ mailboxId: 1001, fileName: 'after.x12', content: Buffer.from('ISA*after~') });
    await run.waitFor(new RegExp(`"msg":"${ENDED.replace(/[;]/g, '\\$&')}"`), 30_000);

    const lines = run
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Line);
    const failed = lines.filter((l) => l.msg === FAILED);
    const errors = failed.filter((l) => l.level === 50);
    const repeats = failed.filter((l) => l.level === 20);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: 'GRID_TRANSPORT_ERROR', failures: 1 });
    expect(repeats.length).toBeGreaterThanOrEqual(3);
    expect(repeats.at(-1)).toMatchObject({ code: 'GRID_TRANSPORT_ERROR', repeats: repeats.length });
    const ended = lines.filter((l) => l.msg === ENDED);
    expect(ended).toHaveLength(1);
    expect(ended[0]).toMatchObject({
      level: 30,
      code: 'GRID_TRANSPORT_ERROR',
      suppressed: repeats.length,
      after: repeats.length + 1,
    });
    expect(ended[0]?.durationMs).toBeGreaterThan(1_000);
    await run.waitFor(/"msg":"parcel received"/, 20_000);
  });
});
