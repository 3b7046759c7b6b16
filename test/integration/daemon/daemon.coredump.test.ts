// Core dumps would hold the API key and bearer tokens (issue 11): a running daemon has
// RLIMIT_CORE 0 and a coredump_filter of 0 even when started with `ulimit -c unlimited`.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { cliPath, eventually } from '../../helpers/daemon-child.js';
import { makeDaemonWorld, type DaemonWorld } from '../../helpers/daemon-config.js';
import { prerequisite } from '../../helpers/require-tool.js';

const linux = prerequisite('/proc', fs.existsSync('/proc/self/limits'), 'the core-dump settings are not checked');

let w: DaemonWorld | undefined;
afterEach(() => w?.cleanup());

describe.skipIf(!linux)('core dumps', () => {
  it('gridsync run: no core file size and no memory in a dump, whatever limit it was started with', async () => {
    w = makeDaemonWorld({ log: { level: 'info', pretty: false } });
    const child = spawn(
      '/bin/sh',
      ['-c', 'ulimit -c unlimited 2>/dev/null || ulimit -c 1024; exec "$0" "$@"', process.execPath, cliPath, 'run', '-c', w.configFile],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    try {
      await eventually(
        () => /gridsync started/.test(out) || (child.exitCode !== null && Promise.reject(new Error(out))),
        30_000,
        'the daemon to start',
      );
      const limits = fs.readFileSync(`/proc/${child.pid}/limits`, 'utf8');
      expect(/^Max core file size\s+(\S+)\s+(\S+)/m.exec(limits)?.slice(1)).toEqual(['0', '0']);
      expect(Number.parseInt(fs.readFileSync(`/proc/${child.pid}/coredump_filter`, 'utf8'), 16)).toBe(0);
    } finally {
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
    }
  }, 60_000);
});
