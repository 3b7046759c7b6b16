// A folder swapped for a link at the one moment a test wants: the child (started with
// GRIDSYNC_PAUSE_AT) stops itself at a pause point; once it is stopped, the folder is moved aside
// to `<dir>.away`, a link to `target` put at its path, and the child let go on.
import fs from 'node:fs';
import { eventually, type CliChild } from './daemon-child.js';

export async function swapAtPause(child: CliChild, point: string, dir: string, target: string): Promise<void> {
  await child.waitFor(new RegExp(`pause point ${point.replaceAll('.', '\\.')} reached`), 30_000);
  await eventually(() => /^\d+ \(.*\) T/.test(fs.readFileSync(`/proc/${child.pid}/stat`, 'utf8')), 10_000, 'the child stopped');
  fs.renameSync(dir, `${dir}.away`);
  fs.symlinkSync(target, dir);
  child.kill('SIGCONT');
}
