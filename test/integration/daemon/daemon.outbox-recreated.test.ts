// The outbox folder deleted and made again while `gridsync run` runs (an ERP's clean-up, an
// operator's `rm -rf` and `mkdir`): the watch stayed on the old folder, which nobody writes to any
// more, so a file dropped into the new one waited for the periodic rescan (30 s by default; 60 s
// here). The watch now follows the folder at the configured path. Both ways of watching, and both
// ways of making the folder again: after a pause (the watch sees its folder go) and at once (it
// sees nothing go, only an event about the folder's own name).
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually, startCli, type CliChild } from '../../helpers/daemon-child.js';
import { makeDaemonWorld, type DaemonWorld } from '../../helpers/daemon-config.js';
import { x12 } from '../../helpers/edi.js';

/** Far longer than the test waits for a file: only the watch can bring it in time. */
const RESCAN = '60s';
/** How long a dropped file may take to reach sentDir: its 100 ms of settling, a claim, an upload. */
const PROMPTLY_MS = 8_000;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function run(w: DaemonWorld): CliChild {
  const daemon = startCli(['run', '-c', w.configFile]);
  cleanups.push(async () => {
    daemon.kill('SIGTERM');
    await daemon.exited;
  });
  return daemon;
}

async function sent(w: DaemonWorld, name: string, daemon: CliChild): Promise<void> {
  await eventually(
    () => fs.existsSync(path.join(w.sent, name)),
    PROMPTLY_MS,
    `${name} in sentDir (daemon output: ${daemon.output().slice(-2000)})`,
  );
}

/** Deletes the outbox and makes it again: after a pause (the watch sees its folder go), or at once (it does not). */
const recreations = [
  { how: 'after a pause', pauseMs: 1_000 },
  { how: 'at once', pauseMs: 0 },
];

describe.each([
  { watch: 'events', usePolling: false },
  { watch: 'polling', usePolling: true },
])('gridsync run, outbox watched by $watch: the folder deleted and made again', ({ usePolling }) => {
  it.each(recreations)(
    '$how: a file dropped into the new folder is sent at once, not at the next rescan',
    async ({ pauseMs }) => {
      const w = makeDaemonWorld(
        {},
        { outbox: { dir: './outbox', sentDir: './sent', errorDir: './error', stableMs: '100ms', rescanMs: RESCAN, usePolling } },
      );
      cleanups.push(() => w.cleanup());
      fs.mkdirSync(w.outbox, { recursive: true });
      const daemon = run(w);
      // The daemon is up and watching once a first file went through.
      fs.writeFileSync(path.join(w.outbox, 'first.x12'), x12(1));
      await sent(w, 'first.x12', daemon);

      fs.rmSync(w.outbox, { recursive: true });
      if (pauseMs) await new Promise((r) => setTimeout(r, pauseMs));
      fs.mkdirSync(w.outbox);
      await new Promise((r) => setTimeout(r, 200));
      fs.writeFileSync(path.join(w.outbox, 'second.x12'), x12(2));
      await sent(w, 'second.x12', daemon);
      expect(fs.readdirSync(w.outbox)).toEqual([]);

      // Made again a second time: the new watch follows the folder too.
      fs.rmSync(w.outbox, { recursive: true });
      if (pauseMs) await new Promise((r) => setTimeout(r, pauseMs));
      fs.mkdirSync(w.outbox);
      await new Promise((r) => setTimeout(r, 200));
      fs.writeFileSync(path.join(w.outbox, 'third.x12'), x12(3));
      await sent(w, 'third.x12', daemon);
    },
    60_000,
  );
});
