/**
 * Whether a staged parcel's final file is in the inbox: the staging file is gone, and the only
 * rename gridsync makes out of staging is the placement — but a tmp cleaner or an operator can
 * remove a staging file too. So its absence proves nothing; the file under the journalled final
 * name, with the journalled size and content hash, does.
 */
import { createHash } from 'node:crypto';
import { FileCalls, openRegularNoFollow, UnsafeFileError } from '../files/index.js';

const CHUNK = 1024 * 1024;

/** True when `file` is a regular file (not a link) holding exactly `bytes` bytes hashing to `sha256`. */
export async function holdsContent(file: string, expected: { bytes: number | null; sha256: string | null }): Promise<boolean> {
  if (expected.bytes === null || expected.sha256 === null) return false;
  let opened;
  try {
    opened = await openRegularNoFollow(file, file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (err instanceof UnsafeFileError || code === 'ENOENT' || code === 'ENOTDIR') return false;
    throw err;
  }
  const { fd, stat } = opened;
  try {
    if (stat.size !== expected.bytes) return false;
    const hash = createHash('sha256');
    const buf = Buffer.allocUnsafe(Math.max(1, Math.min(CHUNK, stat.size)));
    for (let at = 0; ;) {
      const n = await FileCalls.POOL.read(fd, buf, 0, buf.length, at);
      if (n === 0) break;
      hash.update(buf.subarray(0, n));
      at += n;
    }
    return hash.digest('hex') === expected.sha256;
  } finally {
    await FileCalls.POOL.close(fd);
  }
}
