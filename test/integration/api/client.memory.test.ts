// Issue #2: a 200 MB parcel uploaded and downloaded by the built client in a child process; peak
// RSS must not grow with the parcel size (a whole-body approach would need well over 600 MB). The
// child runs with the Node flags gridsync's entry points use (src/cli/main.ts).
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../../src/emulator/index.js';
import { repoRoot } from '../../helpers/journal-child.js';

const SIZE = Number(process.env.GRIDSYNC_MEM_TEST_MB ?? 200) * 1024 * 1024;
let emu: Emulator;
let dir: string;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-mem-'));
  emu = await startEmulator({ dataFile: path.join(dir, 'emu.sqlite'), settings: { acknowledgeDelayMs: 0 } });
});
afterAll(async () => {
  await emu.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('streamed transfer memory', () => {
  it('uploads and downloads 200 MB with peak RSS growth under 64 MB, byte-identical', async () => {
    const file = path.join(dir, 'big.bin');
    const hash = createHash('sha256');
    const fd = fs.openSync(file, 'w');
    const chunk = Buffer.alloc(4 * 1024 * 1024);
    for (let i = 0; i < SIZE / chunk.length; i++) {
      chunk.fill(i % 251);
      chunk.writeUInt32LE(i, 0);
      hash.update(chunk);
      fs.writeSync(fd, chunk);
    }
    fs.closeSync(fd);
    const out = path.join(dir, 'back.bin');
    const child = spawn(
      process.execPath,
      ['--max-semi-space-size=4', path.join(repoRoot, 'test/helpers/api-memory-child.mjs'), emu.url, file, out, 'demo-key-1002'],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    const code = await new Promise((r) => child.on('exit', r));
    expect(code).toBe(0);
    const r = JSON.parse(stdout.trim()) as {
      bytes: number;
      sha256: string;
      baseRss: number;
      peakRss: number;
      uploadMs: number;
      downloadMs: number;
    };
    const growthMb = (r.peakRss - r.baseRss) / 1024 / 1024;
    console.log(
      JSON.stringify({
        sizeMb: SIZE / 1024 / 1024,
        peakRssGrowthMb: Math.round(growthMb),
        uploadMBps: Math.round(SIZE / 1024 / 1024 / (r.uploadMs / 1000)),
        downloadMBps: Math.round(SIZE / 1024 / 1024 / (r.downloadMs / 1000)),
      }),
    );
    expect(r.bytes).toBe(SIZE);
    expect(r.sha256).toBe(hash.digest('hex'));
    expect(fs.statSync(out).size).toBe(SIZE);
    expect(growthMb).toBeLessThan(64);
  }, 180_000);
});
