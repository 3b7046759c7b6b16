// Long runs say how far they are: on a terminal (a pty from script(1)) live lines per mailbox and
// direction with done/total, bytes, rate, ETA, then a summary table; --quiet drops both; every
// command takes --log-level and --quiet.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeDaemonWorld, type DaemonWorld } from '../../helpers/daemon-config.js';
import { cliPath, runCli } from '../../helpers/daemon-child.js';
import { x12 } from '../../helpers/edi.js';
import { prerequisite, runs } from '../../helpers/require-tool.js';

const worlds: DaemonWorld[] = [];
afterEach(() => worlds.splice(0).forEach((w) => w.cleanup()));

const hasScript = prerequisite('script (util-linux)', runs('script', '--version'), 'progress on a terminal is not checked');

describe('progress on a terminal', () => {
  it.skipIf(!hasScript)('300 files out: live lines with done/total, bytes, rate, ETA; a summary table; --quiet shows neither', () => {
    const w = makeDaemonWorld();
    worlds.push(w);
    fs.mkdirSync(w.outbox, { recursive: true });
    // Enough files that the run outlasts the first 250 ms redraw: 40 could all be sent before it.
    for (let i = 0; i < 300; i++) fs.writeFileSync(path.join(w.outbox, `po-${i}.x12`), x12(1000 + i));
    const cmd = `${process.execPath} ${cliPath} once -c ${w.configFile}`;
    const r = spawnSync('script', ['-qec', cmd, '/dev/null'], { encoding: 'utf8', timeout: 120_000 });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/mb1001 +out +\d+\/\d+ +items +[\d.]+ (B|KiB|MiB) +[\d.]+ items\/s [\d.]+ (B|KiB|MiB)\/s +ETA (\d+s|\?)/);
    expect(r.stdout).toMatch(/mailbox +dir +done +failed +deferred +bytes +time +rate/);
    expect(r.stdout).toMatch(/mb1001 +out +300 +0 +0 +[\d.]+ KiB/);
    // The 300 per-file info lines are not printed on a terminal (the progress replaces them).
    expect(r.stdout).not.toMatch(/"msg":"file sent"|INFO.*sent/);

    for (let i = 0; i < 3; i++) fs.writeFileSync(path.join(w.outbox, `q-${i}.x12`), x12(2000 + i));
    const quiet = spawnSync('script', ['-qec', `${cmd} --quiet`, '/dev/null'], { encoding: 'utf8', timeout: 60_000 });
    expect(quiet.status).toBe(0);
    expect(quiet.stdout).not.toMatch(/mailbox +dir|items\/s/);
    expect(fs.readdirSync(w.sent)).toHaveLength(303);
  });
});

describe('--log-level and --quiet on every command', () => {
  it.each(['run', 'once', 'status', 'doctor', 'requeue', 'call', 'emulator'])('%s', (cmd) => {
    expect(runCli([cmd, '--log-level', 'debug', '--quiet', '--help']).status).toBe(0);
    const bad = runCli([cmd, '--log-level', 'loud']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/--log-level: expected one of fatal, error, warn, info, debug, trace, silent, got "loud"/);
  });

  it('doctor --quiet prints only what needs attention', () => {
    const w = makeDaemonWorld();
    worlds.push(w);
    const loud = runCli(['doctor', '-c', w.configFile]);
    const quiet = runCli(['doctor', '-c', w.configFile, '--quiet']);
    expect(loud.stdout).toMatch(/^✓ /m);
    expect(quiet.stdout).not.toMatch(/^✓ /m);
    expect(quiet.status).toBe(loud.status);
  });
});
