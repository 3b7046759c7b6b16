/**
 * Durable filesystem steps shared by both pipelines. A rename is only durable once the directory
 * that holds the new entry is fsynced; file contents only once the file is fsynced before the
 * rename (otherwise a power cut can leave a 0-byte file under the final name).
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { GridsyncError } from '../errors/index.js';
import { FileCalls } from './calls.js';
import { SharedSync } from './coalesce.js';
import type { NamesInUse } from './names-in-use.js';
import { uniqueVariant } from './naming.js';
import type { DirHandle } from './safe-open.js';

/** A filesystem step that failed, with the path an operator needs. */
export class FileOperationError extends GridsyncError {
  constructor(
    /** The system's code (ENOENT, EACCES, ENOSPC, …), kept as the code so disk-condition checks read it like a raw Node error. */
    readonly code: string,
    readonly operation: string,
    readonly filePath: string,
    cause: unknown,
  ) {
    super(`${operation} ${filePath}: ${(cause as Error)?.message ?? String(cause)}`, { cause });
  }
}

function wrap(operation: string, filePath: string, err: unknown): FileOperationError {
  return new FileOperationError((err as NodeJS.ErrnoException)?.code ?? 'EUNKNOWN', operation, filePath, err);
}

export async function fsyncFile(filePath: string): Promise<void> {
  let handle: fsp.FileHandle | undefined;
  try {
    // Never through a link, never waiting on a FIFO someone put in the file's place.
    handle = await fsp.open(filePath, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
    await handle.sync();
  } catch (err) {
    throw wrap('fsync', filePath, err);
  } finally {
    await handle?.close();
  }
}

/**
 * fsync a directory; concurrent calls for one directory share fsyncs (SharedSync), and the
 * directory stays open while calls keep coming (a burst opens it once, not once per fsync).
 */
export function fsyncDir(dirPath: string): Promise<void> {
  const key = path.resolve(dirPath);
  let syncer = dirSyncers.get(key);
  if (!syncer) {
    let handle: fsp.FileHandle | undefined;
    const release = (): void => {
      void handle?.close().catch(() => undefined);
      handle = undefined;
    };
    syncer = new SharedSync(
      async () => {
        try {
          handle ??= await fsp.open(key, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
          await handle.sync();
        } catch (err) {
          release();
          throw wrap('fsync directory', key, err);
        }
      },
      () => {
        dirSyncers.delete(key);
        release();
      },
    );
    dirSyncers.set(key, syncer);
  }
  return syncer.request();
}

const dirSyncers = new Map<string, SharedSync>();

/** mkdir -p, fsyncing each directory created so the new entries survive a power cut. */
export async function ensureDirDurable(dirPath: string, calls: FileCalls = FileCalls.POOL): Promise<void> {
  const missing: string[] = [];
  let cur = path.resolve(dirPath);
  while (!(await calls.exists(cur))) {
    missing.push(cur);
    const parent = path.dirname(cur);
    if (parent === cur) break;
    cur = parent;
  }
  if (missing.length === 0) return;
  try {
    await fsp.mkdir(dirPath, { recursive: true });
  } catch (err) {
    throw wrap('mkdir', dirPath, err);
  }
  for (const dir of missing) await fsyncDir(path.dirname(dir));
}

export async function exists(p: string | Buffer): Promise<boolean> {
  try {
    await fsp.lstat(p);
    return true;
  } catch {
    return false;
  }
}

/** True when both paths (or their nearest existing ancestors) are on one filesystem: rename works. */
export async function sameFilesystem(a: string, b: string): Promise<boolean> {
  const [da, db] = await Promise.all([deviceOf(a), deviceOf(b)]);
  return da === db;
}

async function deviceOf(p: string): Promise<number> {
  let cur = path.resolve(p);
  for (;;) {
    try {
      return (await fsp.stat(cur)).dev;
    } catch (err) {
      const parent = path.dirname(cur);
      if (parent === cur) throw wrap('stat', p, err);
      cur = parent;
    }
  }
}

/** Throws a FileOperationError naming the directory unless it exists and a file can be created in it. */
export async function checkWritable(dirPath: string): Promise<void> {
  const probe = path.join(dirPath, `.gridsync-write-test-${process.pid}`);
  try {
    const st = await fsp.stat(dirPath);
    if (!st.isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
    await fsp.writeFile(probe, '');
  } catch (err) {
    throw wrap('write to', dirPath, err);
  } finally {
    await fsp.rm(probe, { force: true });
  }
}

/** Free bytes for an unprivileged user on the filesystem holding `dirPath`. */
export async function freeBytes(dirPath: string): Promise<number> {
  const s = await fsp.statfs(dirPath);
  return s.bavail * s.bsize;
}

/**
 * rename, or copy + fsync + unlink across filesystems (sentDir or errorDir on another disk). The
 * entry is moved as what it is: a symlink is recreated, never followed (its target is not
 * copied); a FIFO or device cannot cross filesystems and is refused. With `into`, `to` names an
 * entry of that folder held open (`into.at(name)`), which is fsynced instead of a path.
 */
export async function moveDurable(from: string | Buffer, to: string, calls: FileCalls = FileCalls.POOL, into?: DirHandle): Promise<void> {
  if (!into) await ensureDirDurable(path.dirname(to), calls);
  try {
    await calls.rename(from, to);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw wrap('rename', `${from} -> ${to}`, err);
    const st = await fsp.lstat(from);
    if (st.isSymbolicLink()) await fsp.symlink(await fsp.readlink(from), to);
    else if (st.isFile()) {
      await fsp.copyFile(from, to, fs.constants.COPYFILE_EXCL);
      await fsyncFile(to);
    } else throw wrap('move across filesystems', String(from), Object.assign(new Error('not a regular file or a link'), { code: 'EXDEV' }));
    // A source that cannot be removed (immutable, another user's in a sticky folder) is not moved:
    // the copy goes, or the file would be in both places, sent or requeued twice.
    await fsp.unlink(from).catch(async (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return;
      await fsp.rm(to, { force: true });
      throw wrap('remove', String(from), err);
    });
  }
  await (into ? into.sync() : fsyncDir(path.dirname(to)));
}

/**
 * A name in the folder held open as `dir` not taken by a file or by an error report
 * (`<name>.error.json`): `name`, else
 * its unique variant. With `inUse`, the name returned is held there under `folder` (the folder's
 * path) and neither taken by another move of this process: the caller releases it once moved.
 */
export function freeNameIn(
  dir: DirHandle,
  name: string,
  tag: string,
  calls: FileCalls = FileCalls.POOL,
  inUse?: { names: NamesInUse; folder: string },
): Promise<string> {
  return firstFree(name, tag, (n) => dir.at(n), calls, inUse);
}

async function firstFree(
  name: string,
  tag: string,
  at: (name: string) => string,
  calls: FileCalls,
  inUse?: { names: NamesInUse; folder: string },
): Promise<string> {
  const onDisk = async (n: string): Promise<boolean> => !(await calls.exists(at(n))) && !(await calls.exists(at(`${n}.error.json`)));
  // Held before the first await: a move running beside this one must not find the same name free.
  const free = async (n: string): Promise<boolean> => {
    if (!inUse) return onDisk(n);
    const key = path.join(inUse.folder, n);
    if (!inUse.names.hold(key)) return false;
    let found = false;
    try {
      found = await onDisk(n);
      return found;
    } finally {
      if (!found) inUse.names.release(key);
    }
  };
  if (await free(name)) return name;
  for (let n = 1; ; n++) {
    const candidate = uniqueVariant(name, n === 1 ? tag : `${tag}-${n}`);
    if (await free(candidate)) return candidate;
  }
}
