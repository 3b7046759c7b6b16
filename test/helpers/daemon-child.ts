// Runs the built CLI (`node dist/cli/main.js …`) as a child process, for daemon and CLI tests.
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { onTestFinished } from 'vitest';
import { repoRoot } from './journal-child.js';

export const cliPath = path.join(repoRoot, 'dist/cli/main.js');

export interface CliChild {
  readonly pid: number;
  /** Resolves with the first match of `re` in stdout (JSON log lines) or stderr. */
  waitFor(re: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
  kill(signal: NodeJS.Signals): void;
  output(): string;
}

export function startCli(args: string[], env: Record<string, string> = {}, cwd = repoRoot): CliChild {
  const proc = spawn(process.execPath, [cliPath, ...args], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const waiters: { re: RegExp; resolve: (m: RegExpExecArray) => void }[] = [];
  const onData = (d: Buffer): void => {
    out += d.toString();
    for (const w of [...waiters]) {
      const m = w.re.exec(out);
      if (m) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(m);
      }
    }
  };
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
    onData(d);
  });
  proc.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
    onData(d);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) =>
    proc.on('exit', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return {
    pid: proc.pid ?? -1,
    output: () => out,
    waitFor: (re, timeoutMs = 20_000) =>
      new Promise((resolve, reject) => {
        const m = re.exec(out);
        if (m) return resolve(m);
        const timer = setTimeout(() => reject(new Error(`timed out waiting for ${re} in:\n${out.slice(-3000)}`)), timeoutMs);
        waiters.push({ re, resolve: (x) => (clearTimeout(timer), resolve(x)) });
      }),
    exited,
    kill: (signal) => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
    },
  };
}

/** Runs a CLI command to completion. */
export function runCli(args: string[], env: Record<string, string> = {}, cwd = repoRoot) {
  return spawnSync(process.execPath, [cliPath, ...args], { cwd, env: { ...process.env, ...env }, encoding: 'utf8', timeout: 60_000 });
}

/** Polls `check` every 50 ms until it returns a value or the timeout passes. */
export async function eventually<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 20_000,
  what = 'condition',
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * `gridsync once -c config` as a child process, asynchronously (an emulator or a scripted service in
 * this process keeps answering), optionally made to kill itself at a crash point
 * (`GRIDSYNC_CRASH_AT`). Without the parent's NODE_OPTIONS: a crash must be the process's own, not a
 * preloaded tool's. A child still running when its test finishes (a `once` that hangs, a test that
 * timed out) is killed then, after the file's afterEach hooks: none outlives the test file.
 */
export function onceChild(
  config: string,
  crashAt?: string,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  return new Promise((resolve) => {
    const env: Record<string, string | undefined> = { ...process.env, ...(crashAt ? { GRIDSYNC_CRASH_AT: crashAt } : {}) };
    delete env.NODE_OPTIONS;
    const child = spawn(process.execPath, [cliPath, 'once', '-c', config], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    onTestFinished(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code, signal) => resolve({ code, signal, stderr }));
  });
}
