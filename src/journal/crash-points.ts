/**
 * Named crash points for the crash tests (docs/testing.md): `GRIDSYNC_CRASH_AT=placed:3` makes
 * the process SIGKILL itself the 3rd time it passes `crashPoint('placed')`. Several points may be
 * given, comma-separated. Pipelines call `crashPoint` right after every durable step; in
 * production the variable is unset and a call costs one Map lookup.
 */
let targets: Map<string, number> | undefined;
let pauses: Map<string, number> | undefined;
const passes = new Map<string, number>();

function parseTargets(spec: string | undefined): Map<string, number> {
  const map = new Map<string, number>();
  for (const part of (spec ?? '').split(',')) {
    const [name, count] = part.trim().split(':');
    if (name) map.set(name, Number.parseInt(count ?? '1', 10) || 1);
  }
  return map;
}

export function crashPoint(name: string): void {
  targets ??= parseTargets(process.env.GRIDSYNC_CRASH_AT);
  if (reached(name, targets)) process.kill(process.pid, 'SIGKILL');
}

/**
 * Named pause points for races a test must win: `GRIDSYNC_PAUSE_AT=in.before-rename:2` makes the
 * process SIGSTOP itself the 2nd time it passes there, woken later by SIGCONT — for the chaos test
 * a stale owner frozen right before a side effect (docs/high-availability.md says which, and what
 * makes each safe), for the folder-link tests a step frozen right after a folder's check
 * (docs/testing.md). A line on stderr names the point first.
 */
export function pausePoint(name: string): void {
  pauses ??= parseTargets(process.env.GRIDSYNC_PAUSE_AT);
  if (reached(`pause:${name}`, pauses, name)) {
    // Written synchronously (a file or pipe), before the stop: whoever wakes the process knows where it stopped.
    process.stderr.write(`pause point ${name} reached: stopping\n`);
    process.kill(process.pid, 'SIGSTOP');
  }
}

function reached(key: string, of: Map<string, number>, name: string = key): boolean {
  const target = of.get(name);
  if (target === undefined) return false;
  const n = (passes.get(key) ?? 0) + 1;
  passes.set(key, n);
  return n === target;
}
