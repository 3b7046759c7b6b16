// A share mounted over the inbox while `gridsync run` runs (as root: a tmpfs here): staging stays
// on the filesystem checked at start-up, so no placement can be atomic any more and parcels wait on
// the service. They did, but the reason was the rename's errno text (`INBOUND_DEFERRED`, `EXDEV:
// cross-device link not permitted, rename '…part' -> '…'`), which names neither the cause nor the
// setting that fixes it — unlike the same condition found at start-up (`FILES_CROSS_FILESYSTEM`,
// naming `inbox.stagingDir`). Now it is that code and that advice. Unmounted, the parcel arrives.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '@gridsync/emulator';
import { eventually, startCli } from '../../helpers/daemon-child.js';
import { isRoot, prerequisite } from '../../helpers/require-tool.js';
import { makeDaemonWorld, type DaemonWorld } from '../../helpers/daemon-config.js';

const canMount = prerequisite('root (mount -t tmpfs)', isRoot, 'a share mounted over the inbox under `run`');

let emu: Emulator;
let w: DaemonWorld | undefined;
beforeEach(async () => {
  emu = await startEmulator({ port: 0 });
});
afterEach(async () => {
  await emu.close();
  w?.cleanup();
  w = undefined;
});

describe.runIf(canMount)('a filesystem mounted over the inbox under `run`', () => {
  it('defers the parcel with FILES_CROSS_FILESYSTEM naming inbox.stagingDir; unmounted, it arrives', async () => {
    w = makeDaemonWorld(
      { api: { baseUrl: emu.url, apiKey: 'demo-key-1001' }, log: { level: 'info', pretty: false }, schedule: { poll: '300ms' } },
      { inbox: { dir: './inbox' }, outbox: undefined },
    );
    const { inbox } = w;
    const child = startCli(['run', '-c', w.configFile]);
    let mounted = false;
    try {
      await emu.inject({ mailboxId: 1001, fileName: 'first.x12', content: Buffer.from('ISA*first~') });
      await eventually(() => fs.existsSync(path.join(inbox, 'first.x12')), 30_000, 'the first parcel placed');
      expect(spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', inbox]).status).toBe(0);
      mounted = true;
      await emu.inject({ mailboxId: 1001, fileName: 'second.x12', content: Buffer.from('ISA*second~') });
      const [line] = await child.waitFor(/^.*parcel deferred to the next cycle.*$/m, 30_000);
      const logged = JSON.parse(line) as { code?: string; err?: string };
      expect(logged.code).toBe('FILES_CROSS_FILESYSTEM');
      expect(logged.err).toContain('inbox.stagingDir');
      expect(logged.err).not.toContain('/proc/self/fd');
      expect(fs.readdirSync(inbox)).toEqual([]);
      // Busy while a cycle holds the inbox open: tried again between cycles.
      await eventually(() => spawnSync('umount', [inbox]).status === 0, 10_000, 'the tmpfs unmounted');
      mounted = false;
      await eventually(() => fs.existsSync(path.join(inbox, 'second.x12')), 30_000, 'the parcel placed once unmounted');
      expect(fs.readFileSync(path.join(inbox, 'second.x12'), 'utf8')).toBe('ISA*second~');
    } finally {
      if (mounted) spawnSync('umount', ['-l', inbox]);
      child.kill('SIGTERM');
      await child.exited;
    }
  }, 90_000);
});
