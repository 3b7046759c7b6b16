// Attacks on the outbox from someone who can write to it: entries swapped between the scan and the
// claim, files changed after the claim through a descriptor or a hard link, names no string can
// hold. A hook on the claim's rename (or on the upload) makes the swap land at the worst moment
// every time, on the old code as on the new.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { OutboundPipeline, OutboxConfig } from '../../../src/outbound/index.js';
import { x12 } from '../../helpers/edi.js';
import { beforeRename, entryOf, expectHooksFired } from '../../helpers/rename-hook.js';
import { emulatorParcels, listFiles, makeWorld, outboundPipeline, type TestWorld } from '../../helpers/world.js';

const sha = (b: Buffer | string): string => createHash('sha256').update(b).digest('hex');

let w: TestWorld;
let outside: string;
beforeEach(async () => {
  w = await makeWorld();
  outside = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-outside-'));
});
afterEach(async () => {
  vi.restoreAllMocks();
  expectHooksFired();
  await w.close();
  fs.rmSync(outside, { recursive: true, force: true });
});

const pipeline = (over: Partial<OutboxConfig> = {}): OutboundPipeline => outboundPipeline(w, { stableMs: 20, ...over });
const processingDir = (): string => path.join(w.dirs.state, 'processing');

/** Runs `swap(source)` once, right before gridsync renames `name` out of the outbox to claim it. */
function atClaim(name: string, swap: (source: string) => void): void {
  beforeRename(`claim of ${name}`, entryOf(w.dirs.outbox, name), swap);
}

/** Resolves with the cycle's result, or 'hung' when it has not ended after `ms`. */
async function cycleWithin(p: OutboundPipeline, ms: number): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise((r) => (timer = setTimeout(() => r('hung'), ms)));
  try {
    return await Promise.race([p.runCycle(), hung]);
  } finally {
    clearTimeout(timer);
  }
}

/** Releases a reader stuck in open(2) on a FIFO (the old code's hang), so the test process can end. */
function releaseFifos(dir: string): void {
  for (const n of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
    const p = path.join(dir, n);
    if (fs.lstatSync(p).isFIFO()) fs.closeSync(fs.openSync(p, fs.constants.O_RDWR | fs.constants.O_NONBLOCK));
  }
}

const report = (name: string): { reason: string } => JSON.parse(fs.readFileSync(path.join(w.dirs.error, `${name}.error.json`), 'utf8'));

describe('hostile outbox', () => {
  it('issue 11 #2: a file swapped for a symlink after the scan is moved to errorDir, never followed: the target is not uploaded', async () => {
    const secret = path.join(outside, 'secret.x12');
    fs.writeFileSync(secret, x12(901), { mode: 0o600 });
    fs.writeFileSync(path.join(w.dirs.outbox, 'order.x12'), x12(1));
    atClaim('order.x12', (src) => {
      fs.rmSync(src);
      fs.symlinkSync(secret, src);
    });
    await pipeline().runCycle();
    const uploaded = (await emulatorParcels(w.emu, 1001)).filter((p) => p.direction === 'out');
    expect(uploaded.map((p) => p.sha256)).not.toContain(sha(fs.readFileSync(secret)));
    expect(uploaded).toHaveLength(0);
    expect(listFiles(w.dirs.sent)).toEqual([]);
    // The link itself is in errorDir (moved, not copied through), with the reason beside it.
    expect(fs.lstatSync(path.join(w.dirs.error, 'order.x12')).isSymbolicLink()).toBe(true);
    expect(report('order.x12').reason).toMatch(/symbolic link/);
    expect(fs.readFileSync(secret, 'utf8')).toBe(x12(901));
  });

  it('issue 11 #3: a FIFO swapped in after the scan never blocks the cycle and goes to errorDir', async () => {
    fs.writeFileSync(path.join(w.dirs.outbox, 'pipe.x12'), x12(2));
    fs.writeFileSync(path.join(w.dirs.outbox, 'fine.x12'), x12(3));
    atClaim('pipe.x12', (src) => {
      fs.rmSync(src);
      execFileSync('mkfifo', [src]);
    });
    try {
      const r = await cycleWithin(pipeline(), 15_000);
      expect(r).not.toBe('hung');
      expect(listFiles(w.dirs.sent)).toEqual(['fine.x12']);
      expect(fs.lstatSync(path.join(w.dirs.error, 'pipe.x12')).isFIFO()).toBe(true);
      expect(report('pipe.x12').reason).toMatch(/FIFO/);
    } finally {
      releaseFifos(processingDir());
    }
  }, 30_000);

  it('issue 11 #3: a symlink to /dev/zero swapped in is not read for ever', async () => {
    fs.writeFileSync(path.join(w.dirs.outbox, 'zero.x12'), x12(4));
    atClaim('zero.x12', (src) => {
      fs.rmSync(src);
      fs.symlinkSync('/dev/zero', src);
    });
    const r = await cycleWithin(pipeline(), 15_000);
    expect(r).not.toBe('hung');
    expect(fs.lstatSync(path.join(w.dirs.error, 'zero.x12')).isSymbolicLink()).toBe(true);
  }, 30_000);

  it('issue 11 #11: what is uploaded is what was claimed and validated, even when a writer keeps a descriptor or a hard link', async () => {
    const a = path.join(w.dirs.outbox, 'held-open.x12');
    const b = path.join(w.dirs.outbox, 'hard-linked.x12');
    fs.writeFileSync(a, x12(5));
    fs.writeFileSync(b, x12(6));
    const fd = fs.openSync(a, 'r+');
    fs.linkSync(b, path.join(outside, 'link'));
    const claimed = new Map([
      ['held-open.x12', sha(x12(5))],
      ['hard-linked.x12', sha(x12(6))],
    ]);
    // After the claim and the checks, while the upload starts: rewrite one in place (same size,
    // no longer a valid interchange), grow the other through the hard link.
    const upload = w.client.uploadParcel.bind(w.client);
    vi.spyOn(w.client, 'uploadParcel').mockImplementation(async (file, opts, call) => {
      fs.writeSync(fd, Buffer.alloc(x12(5).length, 'Z'), 0, undefined, 0);
      fs.appendFileSync(path.join(outside, 'link'), 'ISA*grown-after-the-claim~'.repeat(100));
      return upload(file, opts, call);
    });
    try {
      await pipeline().runCycle();
    } finally {
      fs.closeSync(fd);
    }
    const uploaded = (await emulatorParcels(w.emu, 1001)).filter((p) => p.direction === 'out');
    expect(uploaded).toHaveLength(2);
    for (const p of uploaded) expect(p.sha256).toBe(claimed.get(p.fileName as string));
    const rows = w.journal.db.prepare("SELECT file_name, sha256 FROM outbound_files WHERE state = 'archived'").all() as {
      file_name: string;
      sha256: string;
    }[];
    for (const r of rows) expect(r.sha256).toBe(claimed.get(r.file_name));
    expect(fs.readFileSync(path.join(w.dirs.sent, 'held-open.x12'), 'utf8')).toBe(x12(5));
  });

  it('issue 11 #10: a 255-byte name (the limit) is claimed and sent; the journal and the service keep the original name; no row stuck in claiming', async () => {
    const name = `${'n'.repeat(251)}.x12`;
    fs.writeFileSync(path.join(w.dirs.outbox, name), x12(7));
    const p = pipeline();
    await p.runCycle();
    await p.runCycle();
    expect(fs.readdirSync(w.dirs.outbox)).toEqual([]);
    expect(listFiles(w.dirs.sent)).toHaveLength(1);
    const states = w.journal.db.prepare('SELECT state, file_name FROM outbound_files').all() as { state: string; file_name: string }[];
    expect(states).toEqual([{ state: 'archived', file_name: name }]);
    expect((await emulatorParcels(w.emu, 1001)).filter((x) => x.direction === 'out').map((x) => x.fileName)).toEqual([name]);
  });

  it('issue 11 #12: a name that is not UTF-8 (bytes FF FE) is handled as bytes and ends in errorDir with a reason', async () => {
    const raw = Buffer.concat([Buffer.from(`${w.dirs.outbox}/bad-`), Buffer.from([0xff, 0xfe]), Buffer.from('.x12')]);
    fs.writeFileSync(raw, x12(8));
    await pipeline().runCycle();
    expect(fs.readdirSync(w.dirs.outbox)).toEqual([]);
    const inError = fs.readdirSync(w.dirs.error);
    expect(inError).toHaveLength(2);
    const reportName = inError.find((n) => n.endsWith('.error.json')) as string;
    expect(JSON.parse(fs.readFileSync(path.join(w.dirs.error, reportName), 'utf8')).reason).toMatch(/not valid UTF-8.*fffe/);
    expect((await emulatorParcels(w.emu, 1001)).filter((x) => x.direction === 'out')).toHaveLength(0);
  });
});

describe('entries that were never files (present before the scan)', () => {
  it('issue 11: a symlink, a FIFO and a socket planted in the outbox end in errorDir with a reason; a folder is left alone; nothing blocks, nothing is followed', async () => {
    const secret = path.join(outside, 'secret.x12');
    fs.writeFileSync(secret, x12(902), { mode: 0o600 });
    fs.symlinkSync(secret, path.join(w.dirs.outbox, 'link.x12'));
    fs.symlinkSync('/dev/zero', path.join(w.dirs.outbox, 'zero.x12'));
    execFileSync('mkfifo', [path.join(w.dirs.outbox, 'pipe.x12')]);
    const net = await import('node:net');
    const sock = net.createServer().listen(path.join(w.dirs.outbox, 'sock.x12'));
    await new Promise((r) => sock.once('listening', r));
    fs.mkdirSync(path.join(w.dirs.outbox, 'archive'));
    fs.writeFileSync(path.join(w.dirs.outbox, 'good.x12'), x12(3));
    try {
      const result = await cycleWithin(pipeline(), 20_000);
      expect(result).not.toBe('hung');
      // A second cycle finds nothing left to do: every entry but the folder has its final place.
      await cycleWithin(pipeline(), 20_000);
    } finally {
      releaseFifos(w.dirs.outbox);
      releaseFifos(processingDir());
      sock.close();
    }
    const uploaded = (await emulatorParcels(w.emu, 1001)).filter((p) => p.direction === 'out');
    expect(uploaded.map((p) => p.fileName)).toEqual(['good.x12']);
    expect(uploaded.map((p) => p.sha256)).not.toContain(sha(fs.readFileSync(secret)));
    expect(listFiles(w.dirs.sent)).toEqual(['good.x12']);
    for (const name of ['link.x12', 'zero.x12', 'pipe.x12', 'sock.x12']) {
      expect(report(name).reason, name).toMatch(/symbolic link|FIFO|socket|not a regular file/i);
    }
    expect(fs.lstatSync(path.join(w.dirs.error, 'link.x12')).isSymbolicLink()).toBe(true);
    expect(fs.readdirSync(w.dirs.outbox).sort()).toEqual(['archive']);
    expect(fs.readFileSync(secret, 'utf8')).toBe(x12(902));
  });
});
