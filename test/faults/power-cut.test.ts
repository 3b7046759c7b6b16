// Power cuts: `gridsync run` works with every folder and its journal on an ext4 filesystem whose
// "disk" is an image file; in the middle of a burst (both directions at once) the daemon is killed
// and the image is copied at once. The copy holds what reached the disk and nothing of what only
// sat in the page cache (the filesystem is mounted with commit=60, so nothing is written back on
// its own within the test): a power cut. The copy is repaired as a boot would (e2fsck replays the
// filesystem's journal), mounted at the same place, and `gridsync once` recovers from it. Then
// every parcel must be in the inbox exactly once with its content and confirmed at the service,
// every file uploaded exactly once and archived, nothing left in staging, processing or errorDir.
// A parcel confirmed before the cut whose file had not reached the disk would be lost for good
// (the service lists it no more); an upload whose record had not reached the disk must not be
// sent twice. Two canaries written just before each cut show that the method loses what was not
// fsynced. docs/testing.md#power-cut tells the method; it needs root and a loop device.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator } from '@gridsync/emulator';
import { eventually, onceChild, startCli } from '../helpers/daemon-child.js';
import { x12 } from '../helpers/edi.js';
import { isRoot, prerequisite } from '../helpers/require-tool.js';
import { emulatorParcels, listFiles } from '../helpers/world.js';

const sha = (b: Buffer | string): string => createHash('sha256').update(b).digest('hex');
const sh = (cmd: string, ...args: string[]): { status: number | null; out: string } => {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
};
/** The image lives in memory (tmpfs) where there is one: the test measures the method, not the disk. */
const imageDir = fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir();

/** An ext4 image formatted, mounted on a loop device and unmounted again: what every cut needs. */
function loopMounts(): boolean {
  if (!isRoot) return false;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-loop-probe-'));
  const img = path.join(imageDir, `${path.basename(dir)}.img`);
  try {
    fs.writeFileSync(img, '');
    fs.truncateSync(img, 8 * 1024 * 1024);
    if (sh('mkfs.ext4', '-q', '-F', img).status !== 0) return false;
    if (sh('mount', '-o', 'loop', img, dir).status !== 0) return false;
    sh('umount', dir);
    return sh('e2fsck', '-V').status === 0;
  } finally {
    fs.rmSync(img, { force: true });
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const usable = prerequisite(
  'root with mkfs.ext4, e2fsck and loop mounts',
  loopMounts(),
  'power cuts (folders and journal on a loop-mounted ext4 image, copied at the cut) are not tested',
);

const CUTS = 4;
const PARCELS = 120;
const FILES = 60;
let root: string;

beforeAll(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-power-cut-'));
});
afterAll(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

/** Writes `content` to `file` and fsyncs it, or leaves it in the page cache. */
function writeFile(file: string, content: string, durable: boolean): void {
  const fd = fs.openSync(file, 'w');
  fs.writeSync(fd, content);
  if (durable) fs.fsyncSync(fd);
  fs.closeSync(fd);
}

async function cut(
  n: number,
  seed: number,
): Promise<{ cut: number; killedAfter: number; inboxAtCut: number; sentAtCut: number; fsck: number }> {
  const mnt = path.join(root, `mnt-${n}`);
  const img = path.join(imageDir, `${path.basename(root)}-${n}.img`);
  fs.mkdirSync(mnt);
  fs.writeFileSync(img, '');
  fs.truncateSync(img, 96 * 1024 * 1024);
  expect(sh('mkfs.ext4', '-q', '-F', '-E', 'lazy_itable_init=0,lazy_journal_init=0', img).status).toBe(0);
  expect(sh('mount', '-o', 'loop,commit=60', img, mnt).out).toBe('');
  const emu = await startEmulator({ port: 0, settings: { acknowledgeDelayMs: 0 } });
  try {
    const d = {
      inbox: path.join(mnt, 'inbox'),
      outbox: path.join(mnt, 'outbox'),
      sent: path.join(mnt, 'sent'),
      error: path.join(mnt, 'error'),
      state: path.join(mnt, 'state'),
    };
    for (const p of Object.values(d)) fs.mkdirSync(p);
    const config = path.join(root, `gridsync-${n}.yaml`);
    fs.writeFileSync(
      config,
      [
        `api: { baseUrl: "${emu.url}", apiKey: demo-key-1001 }`,
        `stateDir: ${d.state}`,
        'log: { level: warn, pretty: false }',
        'schedule: { poll: 200ms }',
        'mailboxes:',
        '  - mailboxId: 1001',
        // Every other cut with done markers: the ERP takes a file once its marker is there.
        `    inbox: { dir: ${d.inbox}, concurrency: 4, doneMarker: ${n % 2 === 0} }`,
        `    outbox: { dir: ${d.outbox}, sentDir: ${d.sent}, errorDir: ${d.error}, stableMs: 20ms, concurrency: 4 }`,
        '',
      ].join('\n'),
    );
    const inbound = new Set<string>();
    for (let k = 0; k < PARCELS; k++) {
      const content = Buffer.from(`cut ${n} parcel ${k} ${'x'.repeat(((k * 7919) % 40) * 1000)}`);
      await emu.inject({ mailboxId: 1001, fileName: `in-${k}.x12`, content });
      inbound.add(sha(content));
    }
    // The ERP's files are on the disk before the daemon sees them: a cut must not take them.
    const outbound = new Map<string, string>();
    for (let k = 0; k < FILES; k++) {
      const content = x12(100_000 * n + k + 1);
      writeFile(path.join(d.outbox, `out-${k}.x12`), content, true);
      outbound.set(`out-${k}.x12`, sha(content));
    }
    expect(sh('sync', '-f', d.outbox).status).toBe(0);

    // Cut somewhere in the burst: after this many deliveries in either direction.
    const target = 5 + (seed % (PARCELS + FILES - 40));
    const delivered = (): number => listFiles(d.inbox).filter((f) => !f.endsWith('.done')).length + listFiles(d.sent).length;
    const daemon = startCli(['run', '-c', config]);
    const started = Date.now();
    await eventually(() => delivered() >= target || daemon.output().includes('"level":50'), 60_000, `${target} deliveries`);
    const inboxAtCut = listFiles(d.inbox).filter((f) => !f.endsWith('.done')).length;
    const sentAtCut = listFiles(d.sent).length;
    writeFile(path.join(mnt, 'canary.synced'), 'on the disk', true);
    writeFile(path.join(mnt, 'canary.unsynced'), 'only in the page cache', false);
    daemon.kill('SIGKILL');
    const killedAfter = Date.now() - started;
    await daemon.exited;
    // What reached the disk, copied while the filesystem is still mounted.
    expect(sh('cp', '--sparse=always', img, `${img}.cut`).status).toBe(0);
    expect(sh('umount', mnt).status).toBe(0);
    fs.renameSync(`${img}.cut`, img);
    // 0: clean, 1: errors corrected (its journal replayed); more is a damaged filesystem.
    const fsck = sh('e2fsck', '-fy', img);
    expect(fsck.status, fsck.out).toBeLessThanOrEqual(1);
    expect(sh('mount', '-o', 'loop', img, mnt).out).toBe('');

    expect(fs.readFileSync(path.join(mnt, 'canary.synced'), 'utf8')).toBe('on the disk');
    const unsynced = path.join(mnt, 'canary.unsynced');
    expect(fs.existsSync(unsynced) ? fs.statSync(unsynced).size : 0, 'the cut lost what was not fsynced').toBe(0);

    let runs = 0;
    for (; runs < 3; runs++) {
      const r = await onceChild(config);
      expect(r.code, `cut ${n}, recovery run ${runs + 1}: ${r.stderr}`).toBe(0);
      if (listFiles(d.outbox).length === 0 && listFiles(d.inbox).filter((f) => !f.endsWith('.done')).length >= PARCELS) break;
    }
    // The inbox also receives the partner's acknowledgments of our uploads (the last ones may still
    // wait at the service): every parcel confirmed is in the inbox once, and nothing else is.
    const parcels = await emulatorParcels(emu, 1001);
    const received = parcels.filter((p) => p.direction === 'in');
    const ours = received.filter((p) => String(p.fileName).startsWith('in-'));
    expect(ours.map((p) => p.sha256).sort()).toEqual([...inbound.keys()].sort());
    expect(
      ours.filter((p) => p.status !== 'InBoxTransferred'),
      `cut ${n}: every parcel confirmed`,
    ).toEqual([]);
    const files = listFiles(d.inbox);
    const data = files.filter((f) => !f.endsWith('.done'));
    if (n % 2 === 0)
      expect(files.filter((f) => f.endsWith('.done')).sort(), `cut ${n}: a marker for every file`).toEqual(
        data.map((f) => `${f}.done`).sort(),
      );
    else expect(data).toEqual(files);
    const inInbox = data.map((f) => sha(fs.readFileSync(path.join(d.inbox, f))));
    const confirmed = received.filter((p) => p.status === 'InBoxTransferred').map((p) => String(p.sha256));
    expect(inInbox.sort(), `cut ${n}: every confirmed parcel in the inbox exactly once, with its content`).toEqual(confirmed.sort());
    const uploads = parcels.filter((p) => p.direction === 'out');
    expect(uploads.map((p) => p.fileName).sort(), `cut ${n}: every file uploaded exactly once`).toEqual([...outbound.keys()].sort());
    for (const u of uploads) expect(u.sha256).toBe(outbound.get(u.fileName as string));
    expect(listFiles(d.sent).sort()).toEqual([...outbound.keys()].sort());
    expect(listFiles(d.outbox)).toEqual([]);
    expect(listFiles(d.error)).toEqual([]);
    expect(listFiles(path.join(d.state, 'staging'))).toEqual([]);
    expect(listFiles(path.join(d.state, 'processing'))).toEqual([]);
    return { cut: n, killedAfter, inboxAtCut, sentAtCut, fsck: fsck.status ?? -1 };
  } finally {
    await emu.close();
    sh('umount', mnt);
    fs.rmSync(img, { force: true });
  }
}

describe.skipIf(!usable)('power cut in the middle of a burst, then recovery from what reached the disk', () => {
  it('nothing lost, nothing twice, in every cut', async () => {
    const seed = Number(process.env.GRIDSYNC_POWER_CUT_SEED ?? Date.now() % 100_000);
    const results = [];
    for (let n = 1; n <= CUTS; n++) results.push(await cut(n, seed * n));
    console.log(JSON.stringify({ suite: 'power-cut', seed, cuts: results }));
  }, 300_000);
});
