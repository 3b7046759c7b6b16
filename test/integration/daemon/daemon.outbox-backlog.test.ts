// A month-end drop: thousands of files in the outbox when `gridsync run` starts. The folder watch
// (chokidar until then) put an inotify watch on every file and kept a listing row per file, which
// it read again — an lstat per entry — after events: with 30,000 files ~120 MB and a whole core
// while the claims moved them out, and as many kernel watches as files, of a per-user limit other
// programs share. The watch is now one, on the folder, whatever the folder holds; it still brings
// a file in long before the rescan would.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually, startCli, type CliChild } from '../../helpers/daemon-child.js';
import { makeDaemonWorld } from '../../helpers/daemon-config.js';
import { x12 } from '../../helpers/edi.js';

/** Files waiting in the outbox (no done marker yet): enough that a watch per file cannot pass for a few. */
const WAITING = 2_000;
/** Far longer than the test waits for a file: only the watch can bring it in time. */
const RESCAN = '60s';
const PROMPTLY_MS = 8_000;
/** How long the watches are counted after the first file went through (a watcher still setting up has done so by then). */
const COUNT_FOR_MS = 2_000;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The inotify watches the process holds, over all its inotify descriptors (one `inotify wd:` line each). */
function inotifyWatches(pid: number): number {
  let watches = 0;
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    let target: string;
    try {
      target = fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue; // closed meanwhile
    }
    if (target !== 'anon_inode:inotify') continue;
    watches += fs
      .readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('inotify wd:')).length;
  }
  return watches;
}

describe('gridsync run with thousands of files waiting in the outbox', () => {
  it('watches the folder, not each file, and still brings a new file in at once', async () => {
    const w = makeDaemonWorld(
      { log: { level: 'info', pretty: false } },
      {
        outbox: { dir: './outbox', sentDir: './sent', errorDir: './error', rescanMs: RESCAN, readiness: 'marker' },
      },
    );
    cleanups.push(() => w.cleanup());
    fs.mkdirSync(w.outbox, { recursive: true });
    for (let i = 0; i < WAITING; i++) fs.writeFileSync(path.join(w.outbox, `waiting-${i}.x12`), x12(i + 1));
    const daemon: CliChild = startCli(['run', '-c', w.configFile]);
    cleanups.push(async () => {
      daemon.kill('SIGTERM');
      await daemon.exited;
    });
    await daemon.waitFor(/"msg":"gridsync started"/);

    fs.writeFileSync(path.join(w.outbox, 'ready.x12'), x12(WAITING + 1));
    fs.writeFileSync(path.join(w.outbox, 'ready.x12.done'), '');
    await eventually(
      () => fs.existsSync(path.join(w.sent, 'ready.x12')),
      PROMPTLY_MS,
      `ready.x12 in sentDir (daemon output: ${daemon.output().slice(-2000)})`,
    );

    let most = 0;
    for (const end = Date.now() + COUNT_FOR_MS; Date.now() < end; await new Promise((r) => setTimeout(r, 100)))
      most = Math.max(most, inotifyWatches(daemon.pid));
    expect(most, 'inotify watches held by the daemon').toBeLessThanOrEqual(2);
    expect(fs.readdirSync(w.outbox)).toHaveLength(WAITING);
  }, 60_000);
});
