/**
 * No core dumps of a process that holds the API key and bearer tokens. Node has no setrlimit or
 * prctl, so: `/proc/self/coredump_filter` = 0 leaves the memory mappings out of any dump (this
 * also holds when the kernel pipes dumps to a collector, which ignores RLIMIT_CORE), and
 * util-linux `prlimit` sets this process's RLIMIT_CORE to 0 where it is installed. The systemd
 * units (LimitCORE=0) and the Docker entrypoint (`ulimit -c 0`) set the limit before Node starts.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';

/** What was done, for a debug line: each step that worked. */
export function disableCoreDumps(): string[] {
  const done: string[] = [];
  try {
    fs.writeFileSync('/proc/self/coredump_filter', '0');
    done.push('coredump_filter');
  } catch {
    // Not Linux, or /proc not mounted: the limit below (or the service manager's) is what remains.
  }
  const r = spawnSync('prlimit', ['--pid', String(process.pid), '--core=0:0'], { stdio: 'ignore', timeout: 5000 });
  if (r.status === 0) done.push('RLIMIT_CORE');
  return done;
}
