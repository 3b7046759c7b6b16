// What `gridsync run` (the built CLI) logs through a service outage: the service stops, cycles fail
// on the backoff, the service comes back on its data file. Before, every failed cycle was an error
// line (a night's outage: one every 5 minutes, each paging whoever watches errors); now one error
// line when the outage starts, with its code, the repetitions at debug, and one line when it ends
// saying how long it lasted and how many cycles failed. The same for a daemon started during the
// outage that waits to learn its mailbox (a warning per try, and without the code).
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '@gridsync/emulator';
import { makeDaemonWorld } from '../../helpers/daemon-config.js';
import { startCli } from '../../helpers/daemon-child.js';
import { cleanupsOf, type Cleanups } from '../../helpers/test-cleanups.js';

interface Line {
  level: number;
  msg: string;
  [k: string]: unknown;
}

/** The JSON log lines a child has written so far. */
const logLines = (child: { output(): string }): Line[] =>
  child
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Line);

/** A world whose config points at `url` with one attempt per call and a short connect timeout, logging at debug. */
function worldFor(cleanups: Cleanups, url: string, mailboxExtra: Record<string, unknown> = {}) {
  const w = makeDaemonWorld({}, mailboxExtra);
  cleanups.push(() => w.cleanup());
  const config = YAML.parse(fs.readFileSync(w.configFile, 'utf8')) as Record<string, unknown>;
  config.api = { baseUrl: url, apiKey: 'demo-key-1001', maxAttempts: 1, timeouts: { connectMs: '500ms' } };
  config.log = { level: 'debug', pretty: false };
  fs.writeFileSync(w.configFile, YAML.stringify(config), { mode: 0o600 });
  return w;
}

/** A free port: an emulator's, closed again. */
async function freePort(): Promise<number> {
  const e = await startEmulator({ port: 0 });
  await e.close();
  return Number(new URL(e.url).port);
}

const FAILED = 'cycle failed; retrying with backoff';
const ENDED = 'cycles get through again; back to the normal schedule';

// Side by side: each test has its own emulator, port and daemon, and mostly waits out the backoff
// (1, 2, 4, 8 s); each cleans up its own (cleanupsOf).
describe.concurrent('run through a service outage', () => {
  it('one error line when it starts, debug while it lasts, one info line when it is over', async (ctx) => {
    const cleanups = cleanupsOf(ctx);
    const port = await freePort();
    const w = worldFor(cleanups, `http://127.0.0.1:${port}`);
    const dataFile = path.join(w.dir, 'emulator.sqlite');
    let emu: Emulator = await startEmulator({ port, dataFile });
    cleanups.push(() => emu.close());

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

    const lines = logLines(run);
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

  it('started during the outage without a mailbox id: one warning while it waits to learn its mailbox, one line when it does', async (ctx) => {
    const cleanups = cleanupsOf(ctx);
    const port = await freePort();
    const w = worldFor(cleanups, `http://127.0.0.1:${port}`, { mailboxId: undefined });
    const run = startCli(['run', '-c', w.configFile]);
    cleanups.push(async () => {
      run.kill('SIGKILL');
      await run.exited;
    });
    // Tries 1 s, 2 s and 4 s apart: the fourth comes about 7 s after the first.
    await run.waitFor(/"retryInMs":8000/, 30_000);
    const emu = await startEmulator({ port, dataFile: path.join(w.dir, 'emulator.sqlite') });
    cleanups.push(() => emu.close());
    await run.waitFor(/"msg":"gridsync started"/, 30_000);

    const waits = logLines(run).filter((l) => l.msg === "cannot learn the session's mailbox yet; retrying");
    expect(waits.map((l) => l.level)).toEqual(waits.map((_, i) => (i === 0 ? 40 : 20)));
    expect(waits.length).toBeGreaterThanOrEqual(4);
    expect(waits[0]).toMatchObject({ code: 'GRID_TRANSPORT_ERROR', retryInMs: 1000 });
    const known = logLines(run).filter((l) => l.msg === "the service answers; the session's mailbox is known");
    expect(known).toHaveLength(1);
    expect(known[0]).toMatchObject({ level: 30, code: 'GRID_TRANSPORT_ERROR', suppressed: waits.length - 1, after: waits.length });
  });
});
