// A 200 MB parcel uploaded and downloaded by the built client in a child process, over REST and
// over SOAP, with the Node flags gridsync's entry points use (src/cli/main.ts): peak RSS must not
// grow with the parcel size. A whole-body approach would need well over 600 MB; over SOAP the
// base64 text alone would be 267 MB if either side built the envelope as one string.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator } from '@gridsync/emulator';
import { repoRoot } from '../../helpers/journal-child.js';

const SIZE = Number(process.env.GRIDSYNC_MEM_TEST_MB ?? 200) * 1024 * 1024;
let dir: string;
let file: string;
let sha256: string;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-mem-'));
  file = path.join(dir, 'big.bin');
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
  sha256 = hash.digest('hex');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe.each([
  // The demo partner would answer the SOAP upload with a 997 the child might list first: keep it away.
  { protocol: 'rest', child: 'api-memory-child.mjs', args: ['demo-key-1002'], acknowledgeDelayMs: 0 },
  { protocol: 'soap', child: 'soap-memory-child.mjs', args: [], acknowledgeDelayMs: 600_000 },
])('streamed transfer memory over $protocol', ({ protocol, child: childScript, args, acknowledgeDelayMs }) => {
  it('uploads and downloads 200 MB with peak RSS growth under 64 MB, byte-identical', async () => {
    const emu = await startEmulator({ dataFile: path.join(dir, `emu-${protocol}.sqlite`), settings: { acknowledgeDelayMs } });
    try {
      const out = path.join(dir, `back-${protocol}.bin`);
      const child = spawn(
        process.execPath,
        ['--max-semi-space-size=4', path.join(repoRoot, 'test/helpers', childScript), emu.url, file, out, ...args],
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
          protocol,
          sizeMb: SIZE / 1024 / 1024,
          peakRssGrowthMb: Math.round(growthMb),
          uploadMBps: Math.round(SIZE / 1024 / 1024 / (r.uploadMs / 1000)),
          downloadMBps: Math.round(SIZE / 1024 / 1024 / (r.downloadMs / 1000)),
        }),
      );
      expect(r.bytes).toBe(SIZE);
      expect(r.sha256).toBe(sha256);
      expect(fs.statSync(out).size).toBe(SIZE);
      fs.rmSync(out);
      expect(growthMb).toBeLessThan(64);
    } finally {
      await emu.close();
    }
  }, 240_000);
});
