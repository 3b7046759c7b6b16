/**
 * The one call that gives a staged file its name in the inbox: link(2), which refuses a name that
 * is taken where rename(2) would replace the file under it; rename only where the filesystem has
 * no hard links, or the policy is `overwrite`.
 */
import path from 'node:path';
import { CrossFilesystemError, type FileCalls } from '../files/index.js';

/**
 * What link(2) answers on a filesystem without hard links (FAT, some SMB and FUSE mounts): there a
 * parcel is placed by a check for its name, then a rename.
 */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'EXDEV', 'ENOSYS']);

/**
 * link(part, to); false when `to` exists. Where the filesystem has no hard links there is no
 * call that creates a name only while it is free: `to` is checked, then `part` renamed to it,
 * and a file written under the name between the two is replaced.
 */
export async function linkedUnderName(calls: FileCalls, part: string, to: string): Promise<boolean> {
  try {
    await calls.link(part, to);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? '';
    if (code === 'EEXIST') return false;
    if (!NO_HARD_LINKS.has(code)) throw err;
  }
  if (await calls.exists(to)) return false;
  await renamedUnderName(calls, part, to);
  return true;
}

/** rename(part, to), replacing what is there. */
export async function renamedUnderName(calls: FileCalls, part: string, to: string): Promise<void> {
  try {
    await calls.rename(part, to);
  } catch (err) {
    // Staging shared the inbox's filesystem at start-up (checked): something was mounted over the
    // inbox, or one of its sub-folders, since. The errno's words name neither that nor the remedy.
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
    throw new CrossFilesystemError(
      `staging ${path.dirname(part)} is not on the filesystem of ${path.dirname(to)} (one mounted there since start-up?): no placement can be atomic, the parcel waits on the service; unmount it, or set inbox.stagingDir to a folder on its filesystem`,
      { cause: err },
    );
  }
}
