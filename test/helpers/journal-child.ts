// Runs a snippet of journal code in a real child process (built dist/ code), for tests that need a
// second process: the single-daemon lock, crash points that SIGKILL the process.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export const distUrl = (p: string): string => pathToFileURL(path.join(repoRoot, 'dist', p)).href;

export interface ChildHandle {
  readonly pid: number;
  /** Resolves with the first stdout line matching `re`. */
  waitFor(re: RegExp): Promise<string>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
  kill(signal: NodeJS.Signals): void;
}

/** `script` is an ES module body; it may use top-level await and `import()` of distUrl(...) paths. */
export function runModuleChild(script: string, env: Record<string, string> = {}): ChildHandle {
  const proc = spawn(process.execPath, ['--input-type=module', '-e', script], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const waiters: { re: RegExp; resolve: (line: string) => void }[] = [];
  proc.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
    for (const w of [...waiters]) {
      const m = w.re.exec(stdout);
      if (m) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(m[0]);
      }
    }
  });
  proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) =>
    proc.once('exit', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return {
    pid: proc.pid ?? -1,
    waitFor: (re) =>
      new Promise((resolve, reject) => {
        const m = re.exec(stdout);
        if (m) return resolve(m[0]);
        waiters.push({ re, resolve });
        void exited.then((r) => reject(new Error(`child exited (${r.code ?? r.signal}) before ${re}: ${r.stderr}`)));
      }),
    exited,
    kill: (signal) => proc.kill(signal),
  };
}
