// SIGTERM to `npm start` used to orphan the daemon: npm and the script's shell ended, node kept the
// http port and the journal lock, and the next start failed. The start script now execs node (the
// shell is replaced, so npm's forwarded signal reaches the daemon). Tested with the real process
// tree: npm → (sh exec) node. The build runs in `prestart`, skipped here with --ignore-scripts (the
// test run has just built dist/, and rebuilding it under other tests would race with them).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../../helpers/daemon-child.js';
import { repoRoot } from '../../helpers/journal-child.js';
import { prerequisite } from '../../helpers/require-tool.js';

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return !fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z');
  } catch {
    return false;
  }
};

/** Every descendant pid of `pid`, from /proc. */
function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const ppid = Number(fs.readFileSync(`/proc/${e}/stat`, 'utf8').split(') ')[1]?.split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(e)]);
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  const walk = (p: number): void => {
    for (const c of children.get(p) ?? []) {
      out.push(c);
      walk(c);
    }
  };
  walk(pid);
  return out;
}

const cmdline = (pid: number): string => {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return '';
  }
};

const hasProc = prerequisite('/proc', fs.existsSync('/proc/self/stat'), 'SIGTERM to npm is not checked');

describe('npm start and signals', () => {
  const cleanups: (() => void)[] = [];
  afterEach(() => cleanups.splice(0).forEach((c) => c()));

  it.skipIf(!hasProc)('SIGTERM to npm stops the daemon too: nothing keeps running, the next start works', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-npmstart-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const env = {
      ...process.env,
      GRIDSYNC_HTTP_PORT: '0',
      GRIDSYNC_LOG_PRETTY: 'false',
      GRIDSYNC_STATE_DIR: path.join(dir, 'state'),
      GRIDSYNC_EMULATOR_DATA_FILE: path.join(dir, 'emulator.sqlite'),
      GRIDSYNC_MAILBOXES_0_INBOX_DIR: path.join(dir, 'inbox'),
      GRIDSYNC_MAILBOXES_0_OUTBOX_DIR: path.join(dir, 'outbox'),
      GRIDSYNC_MAILBOXES_0_OUTBOX_SENT_DIR: path.join(dir, 'sent'),
      GRIDSYNC_MAILBOXES_0_OUTBOX_ERROR_DIR: path.join(dir, 'error'),
    };
    const start = () => {
      const npm = spawn('npm', ['start', '--ignore-scripts', '--silent'], {
        cwd: repoRoot,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      });
      let out = '';
      npm.stdout.on('data', (d: Buffer) => (out += d.toString()));
      npm.stderr.on('data', (d: Buffer) => (out += d.toString()));
      const exited = new Promise<number | null>((resolve) => npm.on('exit', (code) => resolve(code)));
      cleanups.push(() => {
        try {
          process.kill(-(npm.pid as number), 'SIGKILL');
        } catch {
          // already gone
        }
      });
      return { npm, exited, output: () => out };
    };

    const first = start();
    await eventually(() => /"msg":"gridsync started"/.test(first.output()), 30_000, 'the daemon started under npm');
    const daemon = descendants(first.npm.pid as number).find((p) => /dist\/cli\/main\.js run/.test(cmdline(p)));
    expect(daemon, 'node runs under npm').toBeDefined();

    process.kill(first.npm.pid as number, 'SIGTERM'); // npm only, as an operator or a supervisor would
    await first.exited;
    await eventually(() => !alive(daemon as number), 15_000, `the daemon (pid ${daemon}) ended with npm`);
    expect(first.output()).toMatch(/"msg":"gridsync stopped"/);

    // The journal lock and the port are free: a second start works.
    const second = start();
    await eventually(() => /"msg":"gridsync started"/.test(second.output()), 30_000, 'the daemon starts again');
    expect(second.output()).not.toMatch(/locked|EADDRINUSE/);
    process.kill(second.npm.pid as number, 'SIGTERM');
    await second.exited;
  });
});
