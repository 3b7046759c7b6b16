// One temporary folder per test run: every test, and every process a test starts (they inherit
// TMPDIR), creates its temporary files inside it, and it is removed when the run ends — whatever a
// SIGKILLed child or a forgotten cleanup left behind (a green run used to leave ~78 MB in /tmp:
// the content folders of emulators in killed daemons, among others). What was left is reported
// by name prefix, so a leak stays visible instead of filling the disk.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

function sizeOf(p: string): number {
  try {
    const st = fs.lstatSync(p);
    if (!st.isDirectory()) return st.size;
    return fs.readdirSync(p).reduce((n, e) => n + sizeOf(path.join(p, e)), 0);
  } catch {
    return 0;
  }
}

export default function setup(): () => void {
  const parent = process.env.TMPDIR ?? os.tmpdir();
  const dir = fs.mkdtempSync(path.join(parent, 'gridsync-test-run-'));
  // Tests run parts of gridsync as `nobody` (setpriv): like /tmp, anyone may create here.
  fs.chmodSync(dir, 0o1777);
  process.env.TMPDIR = dir;
  return () => {
    const left = new Map<string, { n: number; bytes: number }>();
    for (const e of fs.readdirSync(dir)) {
      const prefix = e.replace(/[-_.][A-Za-z0-9]{6,}$/, '');
      const cur = left.get(prefix) ?? { n: 0, bytes: 0 };
      left.set(prefix, { n: cur.n + 1, bytes: cur.bytes + sizeOf(path.join(dir, e)) });
    }
    const total = [...left.values()].reduce((n, v) => n + v.bytes, 0);
    if (total > 0) {
      const top = [...left.entries()].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, 5);
      console.log(
        `[notice] tests left ${(total / 1e6).toFixed(1)} MB in ${dir} (removed now): ${top.map(([k, v]) => `${k} ×${v.n} ${(v.bytes / 1e6).toFixed(1)} MB`).join(', ')}`,
      );
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
}
