/**
 * Named crash points for the crash tests (docs/testing.md): `GRIDSYNC_CRASH_AT=placed:3` makes
 * the process SIGKILL itself the 3rd time it passes `crashPoint('placed')`. Several points may be
 * given, comma-separated. Pipelines call `crashPoint` right after every durable step; in
 * production the variable is unset and a call costs one Map lookup.
 */
let targets: Map<string, number> | undefined;
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
  const target = targets.get(name);
  if (target === undefined) return;
  const n = (passes.get(name) ?? 0) + 1;
  passes.set(name, n);
  if (n === target) process.kill(process.pid, 'SIGKILL');
}
