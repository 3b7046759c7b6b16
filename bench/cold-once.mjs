// A cold `gridsync once`, as cron starts it (issue #27): the built CLI in a fresh process, one
// mailbox, one direction, `n` items of 5 KB. Its CPU per item is the process's own CPU (user +
// system, every thread: the JIT, the thread pool's fsyncs) minus that of an otherwise identical
// `once` with nothing to do (start-up: module loading, config, journal open), divided by `n`.
// Nothing is warmed up: the first items pay for the JIT, as they do every night.
//
// The CPU of a child is read from this process's /proc/self/stat (cutime + cstime: the children
// it has waited for), so nothing else may be reaped meanwhile: the bench runs its children one
// after the other. Files stay where they are until the bench's run ends (see run.mjs, tempDirs).

import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { spawnChild } from './children.mjs';

/** User and system CPU seconds of the children this process has waited for (clock ticks of 10 ms). */
function reapedChildrenCpu() {
  const fields = fs.readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  return { user: Number(fields[13]) / 100, system: Number(fields[14]) / 100 };
}

/** One `gridsync once -c cfg` run to its end: CPU seconds and wall seconds; throws on a non-zero exit. */
async function runOnce(cliPath, cfg) {
  const c0 = reapedChildrenCpu();
  const t0 = performance.now();
  const profile = process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_PROFILE_DIR] : [];
  const proc = spawnChild(process.execPath, [...profile, cliPath, 'once', '-c', cfg, '--quiet'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  proc.stderr.on('data', (d) => (err += d));
  const code = await new Promise((r) => proc.once('exit', r));
  if (code !== 0) throw new Error(`gridsync once exited ${code}: ${err.slice(-500)}`);
  const c1 = reapedChildrenCpu();
  const userSeconds = c1.user - c0.user;
  const systemSeconds = c1.system - c0.system;
  return { cpuSeconds: userSeconds + systemSeconds, userSeconds, systemSeconds, seconds: (performance.now() - t0) / 1000 };
}

/**
 * `prepare(dirs, n)` puts the items in place (parcels injected for `inbound`, files written into
 * the outbox for `outbound`); an empty run with the same config, in folders of its own, measures
 * the start-up. Returns CPU ms per item (start-up subtracted), the start-up's CPU ms, items/s.
 */
export async function coldOnce({ cliPath, url, apiKey, mailboxId, direction, n, root, prepare, check }) {
  const config = async (tag) => {
    const dirs = {};
    for (const d of ['inbox', 'outbox', 'sent', 'error', 'state']) {
      dirs[d] = path.join(root, tag, d);
      await fsp.mkdir(dirs[d], { recursive: true });
    }
    const box =
      direction === 'inbound'
        ? `    inbox: { dir: ${dirs.inbox} }`
        : `    outbox: { dir: ${dirs.outbox}, sentDir: ${dirs.sent}, errorDir: ${dirs.error}, stableMs: 0, validateEnvelope: false, gridIdFrom: 5001, gridIdTo: 5002 }`;
    const cfg = path.join(root, tag, 'gridsync.yaml');
    await fsp.writeFile(
      cfg,
      [
        `api: { baseUrl: '${url}', apiKey: ${apiKey} }`,
        `stateDir: ${dirs.state}`,
        'mailboxes:',
        `  - mailboxId: ${mailboxId}`,
        box,
        '',
      ].join('\n'),
    );
    return { dirs, cfg };
  };
  const empty = await config('empty');
  const startup = await runOnce(cliPath, empty.cfg);
  const full = await config('full');
  await prepare(full.dirs, n);
  const run = await runOnce(cliPath, full.cfg);
  const done = await check(full.dirs);
  if (done !== n) throw new Error(`cold once ${direction}: ${done} of ${n} items done`);
  return {
    cpuMsPerItem: ((run.cpuSeconds - startup.cpuSeconds) * 1000) / n,
    // Apart, because the system part moves with the disk's state (see docs/performance.md, "The
    // disk") far more than with gridsync's code.
    userMsPerItem: ((run.userSeconds - startup.userSeconds) * 1000) / n,
    systemMsPerItem: ((run.systemSeconds - startup.systemSeconds) * 1000) / n,
    startupCpuMs: startup.cpuSeconds * 1000,
    perSecond: n / (run.seconds - startup.seconds),
  };
}
