// Children of the bench (emulators, daemons, measured clients) end with it. A bench that failed
// half-way used to leave its emulator running: the emulator held the bench's stderr open, so
// `npm run bench | tail` never returned either.

import { spawn } from 'node:child_process';

/** @type {Set<import('node:child_process').ChildProcess>} */
const live = new Set();
process.once('exit', () => {
  for (const proc of live) proc.kill('SIGKILL');
});

/** `spawn`, with the child killed when the bench exits, whether it ends or fails. */
export function spawnChild(command, args, options) {
  const proc = spawn(command, args, options);
  live.add(proc);
  proc.once('exit', () => live.delete(proc));
  return proc;
}
