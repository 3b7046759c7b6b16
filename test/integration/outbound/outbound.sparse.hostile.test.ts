// Hostile round 3: an outbox file huge in apparent size and nearly empty on disk (`truncate -s`,
// a sparse file), or one that a writer holding a descriptor keeps growing after the claim. The
// claim copies the file into a private snapshot before any check: without a bound that copy wrote
// every byte of the apparent size (zeros, no longer sparse) into processing/ — a full disk for
// the outbox and, often, the journal — before `outbox.maxBytes` refused the file. The built CLI
// runs `once` against the embedded emulator.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startCli } from '../../helpers/daemon-child.js';
import { makeDaemonWorld } from '../../helpers/daemon-config.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

describe('a sparse file of 1 GiB in the outbox, outbox.maxBytes 1 MiB', () => {
  it('is refused as too large without being copied: nothing near its size is ever written', async () => {
    const w = makeDaemonWorld(
      {},
      {
        inbox: undefined,
        outbox: { dir: './outbox', sentDir: './sent', errorDir: './error', stableMs: '100ms', rescanMs: '500ms', maxBytes: MiB },
      },
    );
    cleanups.push(() => w.cleanup());
    fs.mkdirSync(w.outbox, { recursive: true });
    const file = path.join(w.outbox, 'huge.x12');
    fs.writeFileSync(file, 'ISA*00*');
    fs.truncateSync(file, GiB);
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(file, old, old);
    expect(fs.statSync(file).blocks * 512).toBeLessThan(MiB);

    const child = startCli(['once', '-c', w.configFile], {}, w.dir);
    cleanups.push(() => child.kill('SIGKILL'));
    await child.exited;

    const report = JSON.parse(fs.readFileSync(path.join(w.error, 'huge.x12.error.json'), 'utf8')) as { errorCode: string; reason: string };
    expect(report.errorCode).toBe('OUTBOUND_TOO_LARGE');
    // The file in errorDir is the one the ERP wrote, still sparse: no copy of its gigabyte was made.
    const refused = fs.statSync(path.join(w.error, 'huge.x12'));
    expect(refused.size).toBe(GiB);
    expect(refused.blocks * 512).toBeLessThan(MiB);
  }, 120_000);
});
