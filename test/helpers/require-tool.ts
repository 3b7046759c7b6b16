/**
 * The one way a test depends on a tool, data or privilege it cannot provide itself (strace,
 * promtool, zeep, openssl, script, systemd-analyze, the EDI corpus, root): when it is missing, one
 * NOTICE line in one format says what is not checked — and under GRIDSYNC_REQUIRE_TOOLS=1 (CI) the
 * missing prerequisite is a failure instead, so a broken install cannot turn into silent skips.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const REQUIRE_TOOLS = process.env.GRIDSYNC_REQUIRE_TOOLS === '1';

/**
 * `present`, after saying so when it is false: `what` names the prerequisite, `unchecked` what is
 * then not tested. Throws when GRIDSYNC_REQUIRE_TOOLS=1 (the test file fails to load: a red run).
 */
export function prerequisite(what: string, present: boolean, unchecked: string): boolean {
  if (present) return true;
  const notice = `NOTICE: skipped, tool or data missing: ${what} — ${unchecked}`;
  if (REQUIRE_TOOLS) throw new Error(`${notice} (GRIDSYNC_REQUIRE_TOOLS=1: a missing prerequisite fails the run)`);
  console.log(notice);
  return false;
}

/** Whether `command args…` runs and exits 0 (e.g. `strace -V`). */
export function runs(command: string, ...args: string[]): boolean {
  return spawnSync(command, args, { stdio: 'ignore' }).status === 0;
}

/** Whether this process runs as root (the tests that drop to nobody need it). */
export const isRoot = process.getuid?.() === 0;

/** Whether `chattr +i` takes in the temp folder (root, a filesystem with the attribute): a file no one may rename. */
export function canPinFiles(): boolean {
  const probe = fs.mkdtempSync(path.join(os.tmpdir(), 'chattr-probe-'));
  const file = path.join(probe, 'f');
  fs.writeFileSync(file, '');
  const set = spawnSync('chattr', ['+i', file]).status === 0;
  spawnSync('chattr', ['-i', file]);
  fs.rmSync(probe, { recursive: true, force: true });
  return set;
}

/** `chattr +i` (or `-i` with `on` false) on each of `files` that exists. */
export function pin(on: boolean, ...files: string[]): void {
  for (const f of files) if (fs.existsSync(f)) spawnSync('chattr', [on ? '+i' : '-i', f]);
}
