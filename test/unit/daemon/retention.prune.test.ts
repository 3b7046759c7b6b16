// Retention of sentDir/errorDir: old regular files go (with their .error.json), recent ones,
// symlinks and their targets stay; nothing is deleted unless configured.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { pruneFolder } from '../../../src/daemon/retention.js';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

describe('pruneFolder', () => {
  it('deletes files older than the limit, in sub-folders too, never through a symlink', async () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-retention-'));
    dirs.push(d);
    const day = 86_400_000;
    const now = Date.now();
    const old = (p: string, days: number): void => {
      fs.mkdirSync(path.dirname(p), { recursive: true });
      fs.writeFileSync(p, 'x');
      const t = new Date(now - days * day);
      fs.utimesSync(p, t, t);
    };
    old(path.join(d, 'err', 'a.x12'), 40);
    old(path.join(d, 'err', 'a.x12.error.json'), 40);
    old(path.join(d, 'err', 'b.x12'), 5);
    old(path.join(d, 'err', '2026-01', 'c.x12'), 60);
    old(path.join(d, 'precious', 'keep.txt'), 400);
    fs.symlinkSync(path.join(d, 'precious', 'keep.txt'), path.join(d, 'err', 'link.x12'));
    fs.symlinkSync(path.join(d, 'precious'), path.join(d, 'err', 'linkdir'));
    const errors: string[] = [];
    old(path.join(d, 'err', '2026-02', 'recent.x12'), 1);
    fs.mkdirSync(path.join(d, 'err', 'made-by-the-erp'));
    expect(await pruneFolder(path.join(d, 'err'), 30 * day, now, (f) => errors.push(f))).toBe(2);
    // The day folder it emptied goes (one a day under a {date}/ template); the others stay.
    expect(fs.readdirSync(path.join(d, 'err')).sort()).toEqual(['2026-02', 'b.x12', 'link.x12', 'linkdir', 'made-by-the-erp']);
    expect(fs.existsSync(path.join(d, 'precious', 'keep.txt'))).toBe(true);
    expect(errors).toEqual([]);
    expect(await pruneFolder(path.join(d, 'missing'), day, now, (f) => errors.push(f))).toBe(0);
    expect(errors).toEqual([]);
  });

  it('lets the event loop run while it walks (years of archive must not stall lease renewals and transfers)', async () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-retention-'));
    dirs.push(d);
    const t = new Date(Date.now() - 400 * 86_400_000);
    for (let i = 0; i < 2000; i++) {
      const p = path.join(d, `f${i}.x12`);
      fs.writeFileSync(p, 'x');
      fs.utimesSync(p, t, t);
    }
    let turns = 0;
    const timer = setInterval(() => turns++, 0);
    try {
      expect(await pruneFolder(d, 30 * 86_400_000, Date.now(), () => undefined)).toBe(2000);
    } finally {
      clearInterval(timer);
    }
    expect(turns).toBeGreaterThan(0);
    expect(fs.readdirSync(d)).toEqual([]);
  });

  it('stops between entries once its signal is aborted (a stopping once must not wait for the walk)', async () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-retention-'));
    dirs.push(d);
    const t = new Date(Date.now() - 400 * 86_400_000);
    for (let i = 0; i < 10; i++) {
      const p = path.join(d, `f${i}.x12`);
      fs.writeFileSync(p, 'x');
      fs.utimesSync(p, t, t);
    }
    const stop = new AbortController();
    stop.abort();
    expect(await pruneFolder(d, 30 * 86_400_000, Date.now(), () => undefined, stop.signal)).toBe(0);
    expect(fs.readdirSync(d)).toHaveLength(10);
  });
});
