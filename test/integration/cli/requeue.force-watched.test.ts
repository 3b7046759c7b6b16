// `requeue --force` beside a running daemon whose outbox takes files at once (`stableMs: 0`): the
// command moved the file back into the outbox first and journalled the force mark after, so the
// daemon could claim the file in between, find no mark, and refuse it as a duplicate again — the
// operator was told "requeued (sent even if a duplicate)" and the file lay in errorDir. The mark
// is now journalled before the file is moved. strace holds the command for 3 s right after its
// move (the rename's return delayed), so the daemon always takes the file inside that window.
// A move that fails after the mark says so, and the mark holds when the file is requeued again.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cliPath, eventually, runCli, startCli } from '../../helpers/daemon-child.js';
import { makeDaemonWorld, type DaemonWorld } from '../../helpers/daemon-config.js';
import { x12 } from '../../helpers/edi.js';
import { prerequisite, runs } from '../../helpers/require-tool.js';

const strace = prerequisite('strace', runs('strace', '-V'), 'requeue --force racing a daemon that takes files at once is not checked');
const HOLD_US = 3_000_000;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** `gridsync requeue ARGS` with every rename of `file` changed by strace's `inject` (`delay_exit=…`, `error=…`). */
function requeueInjected(w: DaemonWorld, file: string, inject: string, args: string[]): Promise<{ code: number | null; out: string }> {
  const child = spawn(
    'strace',
    [
      '-f',
      '-qq',
      '-o',
      '/dev/null',
      '-P',
      file,
      '-e',
      `inject=rename,renameat,renameat2:${inject}`,
      process.execPath,
      cliPath,
      'requeue',
      '-c',
      w.configFile,
      ...args,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, out })));
}

describe.skipIf(!strace)('requeue --force beside a daemon that takes files at once', () => {
  it('journals the mark before the file is back in the outbox: the daemon sends the duplicate', async () => {
    const w = makeDaemonWorld(
      {},
      { outbox: { dir: './outbox', sentDir: './sent', errorDir: './error', stableMs: '0ms', rescanMs: '60s' } },
    );
    cleanups.push(() => w.cleanup());
    fs.mkdirSync(w.outbox, { recursive: true });
    const content = x12(51);
    fs.writeFileSync(path.join(w.outbox, 'first.x12'), content);
    expect(runCli(['once', '-c', w.configFile]).status).toBe(0);
    fs.writeFileSync(path.join(w.outbox, 'again.x12'), content);
    expect(runCli(['once', '-c', w.configFile]).status).toBe(1);
    expect(fs.readFileSync(path.join(w.error, 'again.x12.error.json'), 'utf8')).toMatch(/OUTBOUND_DUPLICATE/);

    const daemon = startCli(['run', '-c', w.configFile]);
    cleanups.push(async () => {
      daemon.kill('SIGTERM');
      await daemon.exited;
    });
    // The daemon is up and watching once a first file went through.
    fs.writeFileSync(path.join(w.outbox, 'probe.x12'), x12(52));
    await eventually(() => fs.existsSync(path.join(w.sent, 'probe.x12')), 20_000, 'the probe file in sentDir');

    const forced = await requeueInjected(w, path.join(w.error, 'again.x12'), `delay_exit=${HOLD_US}`, ['--force', 'again.x12']);
    expect(forced.code, forced.out).toBe(0);
    expect(forced.out).toMatch(/requeued .*again\.x12 → .*\(sent even if a duplicate\)/);
    await eventually(
      () => fs.existsSync(path.join(w.sent, 'again.x12')),
      10_000,
      `again.x12 in sentDir (errorDir: ${fs.readdirSync(w.error).join(', ')}; daemon: ${daemon.output().slice(-1500)})`,
    );
    expect(fs.readdirSync(w.error)).toEqual([]);
  }, 90_000);

  it('a move that fails after the mark leaves the file in errorDir, says so, and the mark holds for the next requeue', async () => {
    const w = makeDaemonWorld({}, { outbox: { dir: './outbox', sentDir: './sent', errorDir: './error', stableMs: '0ms' } });
    cleanups.push(() => w.cleanup());
    fs.mkdirSync(w.outbox, { recursive: true });
    const content = x12(53);
    fs.writeFileSync(path.join(w.outbox, 'first.x12'), content);
    expect(runCli(['once', '-c', w.configFile]).status).toBe(0);
    fs.writeFileSync(path.join(w.outbox, 'again.x12'), content);
    expect(runCli(['once', '-c', w.configFile]).status).toBe(1);

    const failed = await requeueInjected(w, path.join(w.error, 'again.x12'), 'error=EROFS', ['--force', 'again.x12']);
    expect(failed.code, failed.out).toBe(1);
    expect(failed.out).toContain(`not moved back: ${path.join(w.error, 'again.x12')}`);
    expect(failed.out).toMatch(/\[EROFS\]\. The journal has it as requeued already, marked to be sent even if a duplicate/);
    expect(fs.readdirSync(w.error).sort()).toEqual(['again.x12', 'again.x12.error.json']);
    const status = runCli(['status', '--json', '-c', w.configFile]);
    expect((JSON.parse(status.stdout) as { outbound: { counts: Record<string, number> } }).outbound.counts).toEqual({
      archived: 1,
      requeued: 1,
    });

    // Requeued again without --force: the mark journalled the first time lets the duplicate go.
    const again = runCli(['requeue', '-c', w.configFile, 'again.x12']);
    expect(again.status, again.stderr).toBe(0);
    expect(runCli(['once', '-c', w.configFile]).status).toBe(0);
    expect(fs.readdirSync(w.sent).sort()).toEqual(['again.x12', 'first.x12']);
  }, 90_000);
});
