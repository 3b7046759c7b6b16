/**
 * Local or network filesystem: decides whether cheap file calls (lstat, rename, open and write of
 * a small file) may run on the event loop's thread. On a local disk they take microseconds and
 * running them inline saves the thread pool's two wake-ups per call, which cost more than the call
 * (a burst of small parcels spent most of its CPU on them). On a network filesystem one call can
 * take as long as the server does (a hard NFS mount waits for ever), so there every call goes to
 * the thread pool and only a worker thread waits.
 */
import fsp from 'node:fs/promises';

/** statfs(2) f_type of filesystems whose calls may wait on a network (or a user-space server). */
const REMOTE_TYPES = new Set([
  0x6969, // NFS
  0xff534d42, // CIFS
  0xfe534d42, // SMB2
  0x517b, // SMB
  0x65735546, // FUSE (sshfs, s3fs, rclone, …)
  0x01021997, // 9P / v9fs
  0x00c36400, // Ceph
  0x47504653, // GPFS
  0x0bd00bd0, // Lustre
  0x5346414f, // AFS
  0x6b414653, // kAFS
  0x73757245, // Coda
  0x564c, // NCP
  0x013111a8, // IBRIX
  0x61636673, // ACFS
  0x19830326, // FhGFS / BeeGFS
]);

/** True for a filesystem type whose calls cannot hang on a server. */
export const isLocalType = (type: number | bigint): boolean => !REMOTE_TYPES.has(Number(type));

/** True when every folder given is on a local filesystem (an unknown answer counts as remote). */
export async function onLocalFilesystems(...dirs: readonly string[]): Promise<boolean> {
  try {
    const types = await Promise.all(dirs.map(async (d) => (await fsp.statfs(d)).type));
    return types.every(isLocalType);
  } catch {
    return false;
  }
}
