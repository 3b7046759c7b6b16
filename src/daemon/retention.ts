/**
 * Retention of sentDir and errorDir (off unless configured): regular files older than N days by
 * mtime are deleted, in sub-folders too (sentTemplate may create them). Symlinks and anything that
 * is not a regular file are never followed nor deleted; an error report goes with its file.
 */
import fs from 'node:fs';
import path from 'node:path';

/** Deletes old regular files under `dir`; returns how many. Never throws for one file. */
export function pruneFolder(dir: string, maxAgeMs: number, now: number, onError: (file: string, err: Error) => void): number {
  let removed = 0;
  const walk = (d: string, depth: number): void => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') onError(d, err as Error);
      return;
    }
    for (const e of entries) {
      const p = path.join(d, e.name);
      if (e.isDirectory() && depth < 8) walk(p, depth + 1);
      if (!e.isFile() || e.name.endsWith('.error.json')) continue;
      try {
        const st = fs.lstatSync(p);
        if (!st.isFile() || now - st.mtimeMs <= maxAgeMs) continue;
        fs.rmSync(p);
        fs.rmSync(`${p}.error.json`, { force: true });
        removed++;
      } catch (err) {
        onError(p, err as Error);
      }
    }
  };
  walk(dir, 0);
  return removed;
}
