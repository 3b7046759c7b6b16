/**
 * The claim's private snapshot: the claimed file in processing/ is replaced by a copy only
 * gridsync can write, and everything after the claim (the checks, the upload, the archive) reads
 * that copy. Also what makes an entry unsendable at its claim.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { FileCalls, fsyncDir, fsyncFd, SMALL_FILE_BYTES, openRegularNoFollow, UnsafeFileError } from '../files/index.js';
import { GridsyncError } from '../errors/index.js';
import type { ErrorDecision } from '../journal/index.js';
import { FileTooLargeError, sizeLimit } from './checks.js';
import type { OutboxContext } from './types.js';
import { OutboxFileUnmovableError } from './unmovable-error.js';

const SNAPSHOT_SUFFIX = '.snap';
const SNAPSHOT_CHUNK = 1024 * 1024;
const C = fs.constants;

/**
 * Replaces the claimed file in processing/ by a private copy of it; returns the copy's size and
 * hash. A small file on a local filesystem is copied with inline calls (files/calls); only the
 * fsync waits on the thread pool.
 */
export async function snapshotClaimed(
  processing: string,
  ino: number | undefined,
  cfg: OutboxContext['cfg'],
  small: FileCalls,
): Promise<{ bytes: number; sha256: string }> {
  const { fd, stat } = await openRegularNoFollow(processing, processing, small);
  const calls = stat.size <= SMALL_FILE_BYTES ? small : FileCalls.POOL;
  const snap = processing + SNAPSHOT_SUFFIX;
  const limit = sizeLimit(cfg);
  try {
    if (ino !== undefined && stat.ino !== ino) throw new ReplacedFileError(processing);
    if (stat.size > limit) throw new FileTooLargeError(stat.size, limit);
    const out = await createPrivate(calls, snap);
    let result: { bytes: number; sha256: string };
    try {
      result = await copyHashing(calls, fd, out, stat.size, limit);
      // The snapshot is what ends in sentDir/errorDir: give it the ERP's file's group and
      // permission bits (never set-id), so whoever could read the file there still can.
      await calls.fchmod(out, stat.mode & 0o777);
      await calls.fchown(out, -1, stat.gid).catch(() => undefined); // not a member of that group: keep ours
      await fsyncFd(out);
    } finally {
      await calls.close(out);
    }
    await calls.rename(snap, processing);
    // Durable before `claimed` is journalled: a power cut must not bring the outbox's inode back.
    await fsyncDir(path.dirname(processing));
    return result;
  } catch (err) {
    await calls.unlinkIfExists(snap).catch(() => undefined);
    throw err;
  } finally {
    await calls.close(fd);
  }
}

/**
 * A failure to claim an outbox entry that no retry cures — it is no regular file, it was replaced,
 * it cannot be read or moved — as the refusal that sends it to errorDir; undefined for others.
 */
export function unsendable(err: unknown): (ErrorDecision & { readonly errorCode: string }) | undefined {
  if (
    err instanceof UnsafeFileError ||
    err instanceof ReplacedFileError ||
    err instanceof FileTooLargeError ||
    err instanceof OutboxFileUnmovableError
  )
    return { reason: err.message, errorCode: err.code };
  const code = (err as NodeJS.ErrnoException).code ?? '';
  if (code === 'EACCES' || code === 'EPERM') return { reason: `unreadable: ${(err as Error).message}`, errorCode: code };
  return undefined;
}

/** Creates the snapshot file, 0600, never through a link; one left by a crashed claim is replaced. */
async function createPrivate(calls: FileCalls, snap: string): Promise<number> {
  const flags = C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW;
  try {
    return await calls.open(snap, flags, 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    await calls.unlinkIfExists(snap);
    return calls.open(snap, flags, 0o600);
  }
}

/** The file in the outbox's place at the claim is not the one found ready (another inode). */
export class ReplacedFileError extends GridsyncError {
  readonly code = 'OUTBOUND_FILE_REPLACED';
  constructor(readonly filePath: string) {
    super(`the file was replaced between the readiness check and the claim (another inode): not sent; requeue it if it is the one to send`);
  }
}

/** Copies `from` into `to` while hashing; a small file in one read (size + 1 bytes asked: growth shows). */
async function copyHashing(
  calls: FileCalls,
  from: number,
  to: number,
  size: number,
  limit: number,
): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash('sha256');
  const buf = Buffer.allocUnsafe(Math.min(SNAPSHOT_CHUNK, size + 1));
  let bytes = 0;
  for (;;) {
    // A file that grows past the small size (a writer still holds it) goes on via the thread pool:
    // inline calls in a loop would never let the event loop run.
    const c = bytes + buf.length > SMALL_FILE_BYTES ? FileCalls.POOL : calls;
    const bytesRead = await c.read(from, buf, 0, buf.length, bytes);
    if (bytesRead === 0) break;
    const chunk = buf.subarray(0, bytesRead);
    hash.update(chunk);
    bytes += bytesRead;
    if (bytes > limit) throw new FileTooLargeError(bytes, limit, true);
    await c.writeAll(to, chunk, bytes - bytesRead);
  }
  return { bytes, sha256: hash.digest('hex') };
}
