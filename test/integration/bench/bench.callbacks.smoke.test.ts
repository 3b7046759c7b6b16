// The callbacks bench row still runs (issue 23): `npm run bench -- --only callbacks` at a tiny size
// (2 parcels, the polling baseline at 1 s) prints its row and its target line and writes the row
// with measured figures. A smoke test, not the measurement: the full row takes minutes.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const repoRoot = path.resolve(import.meta.dirname, '../../..');

describe('bench: the callbacks row', () => {
  it('runs at a tiny size and prints its row', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-bench-smoke-'));
    const out = path.join(dir, 'results.json');
    try {
      const r = spawnSync(process.execPath, ['bench/run.mjs', '--quick', '--only', 'callbacks'], {
        cwd: repoRoot,
        env: { ...process.env, BENCH_CALLBACK_PARCELS: '2', BENCH_CALLBACK_POLL: '1s', BENCH_CALLBACK_AUTH: 'digest', BENCH_OUT: out },
        encoding: 'utf8',
        timeout: 50_000,
      });
      expect(r.stderr).not.toMatch(/Error/);
      expect(r.status).toBe(0);
      expect(r.stdout).toMatch(/^\| arrival-to-inbox ms with callbacks \(poll 10m, digest\), 2 parcels \| \d+(\.\d+)? /m);
      expect(r.stdout).toMatch(/^ {2}(met|MISSED) {1,4}arrival-to-inbox latency with callbacks/m);
      const result = JSON.parse(fs.readFileSync(out, 'utf8')) as { rows: { figure: string; median: number; p99: number }[] };
      const row = result.rows.find((x) => x.figure.startsWith('arrival-to-inbox'));
      // Both parcels arrived through the callbacks (a missing one would be Infinity, written as null).
      expect(Number.isFinite(row?.median)).toBe(true);
      expect(Number.isFinite(row?.p99)).toBe(true);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
