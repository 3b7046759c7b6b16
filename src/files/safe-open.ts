/**
 * Opening and creating files in folders other people can write to (the inbox, the outbox) without
 * ever following a link someone planted there, and without ever blocking in open(2).
 *
 * Node has no openat(2); on Linux `/proc/self/fd/<fd>/<name>` is the same thing: the kernel
 * resolves the magic link to the very directory the descriptor holds (not to its path, which may
 * have been swapped since), then looks up `<name>` in it. A directory walked one component at a
 * time with O_NOFOLLOW this way cannot be redirected by a symlink, whatever happens to the path
 * meanwhile. Where /proc is missing, each component is checked with lstat instead (a narrow race
 * remains there, and only there).
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { GridsyncError } from '../errors/index.js';
import { FileCalls } from './calls.js';
import { SharedSync } from './coalesce.js';
import { UnsafePathError } from './path-errors.js';

const C = fs.constants;
const HAVE_PROC_FD = fs.existsSync('/proc/self/fd');

/** What is found where a regular file (or a real directory) was expected. */
export function describeKind(st: fs.Stats): string {
  if (st.isSymbolicLink()) return 'a symbolic link';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  if (st.isDirectory()) return 'a directory';
  return 'a regular file';
}

/** A path component or a file is not what gridsync may use (a link, a FIFO, a device, …). */
export class UnsafeFileError extends GridsyncError {
  readonly code = 'FILES_UNSAFE_ENTRY';
  constructor(
    readonly filePath: string,
    /** What was found instead: `a symbolic link`, `a FIFO`, … */
    readonly found: string,
    /** `a regular file`, `a directory`, or a regular file with a bound (`a regular file of at most 65536 bytes`). */
    readonly expected: string,
  ) {
    super(`${filePath} is ${found}, not ${expected}: not followed, not opened`);
  }
}

/** A directory held open: names inside it resolve against the descriptor, never against a path. */
export class DirHandle {
  private readonly shared = new SharedSync(() => this.handle.sync());

  constructor(
    readonly handle: fsp.FileHandle,
    /** The path it was reached by (for messages only). */
    readonly path: string,
  ) {}

  /** A path naming `name` inside this very directory (bytes for a name that is not UTF-8). */
  at(name: string): string;
  at(name: Buffer): Buffer;
  at(name: string | Buffer): string | Buffer;
  at(name: string | Buffer): string | Buffer {
    const text = name.toString();
    if (name.includes('/') || text === '' || text === '.' || text === '..') throw new UnsafePathError(`not a single name: ${text}`);
    if (typeof name === 'string') return `${this.self()}/${name}`;
    return Buffer.concat([Buffer.from(`${this.self()}/`), name]);
  }

  /** A path naming this very directory: names under it resolve against the descriptor. */
  self(): string {
    return HAVE_PROC_FD ? `/proc/self/fd/${this.handle.fd}` : this.path;
  }

  /**
   * Where the directory is now, read from the descriptor (the kernel's own path for it), so no
   * link swapped into the path since it was opened changes the answer.
   */
  location(): Promise<string> {
    return HAVE_PROC_FD ? fsp.readlink(this.self()) : fsp.realpath(this.path);
  }

  /**
   * `text` (a file call's message) with this folder's descriptor path written as the path it was
   * reached by: the descriptor path is how names resolve, the real one is what an operator knows.
   */
  shown(text: string): string {
    return HAVE_PROC_FD ? text.replaceAll(`/proc/self/fd/${this.handle.fd}`, this.path) : text;
  }

  /** A file call's error with its paths (message, `path`, `dest`, our `filePath`) shown as `shown` does; the same error, for rethrowing. */
  shownError(err: unknown): unknown {
    if (!(err instanceof Error)) return err;
    const e = err as Error & { path?: unknown; dest?: unknown; filePath?: unknown };
    e.message = this.shown(e.message);
    if (typeof e.path === 'string') e.path = this.shown(e.path);
    if (typeof e.dest === 'string') e.dest = this.shown(e.dest);
    if (typeof e.filePath === 'string') e.filePath = this.shown(e.filePath);
    return e;
  }

  /** fsync of the directory: makes renames and creations inside it durable. Concurrent calls share fsyncs. */
  sync(): Promise<void> {
    return this.shared.request();
  }

  close(): Promise<void> {
    return this.handle.close();
  }
}

async function openDir(p: string, followLast: boolean, shown: string): Promise<DirHandle> {
  if (!HAVE_PROC_FD && !followLast) {
    const st = await fsp.lstat(p);
    if (!st.isDirectory()) throw new UnsafeFileError(shown, describeKind(st), 'a directory');
  }
  try {
    return new DirHandle(await fsp.open(p, C.O_RDONLY | C.O_DIRECTORY | (followLast ? 0 : C.O_NOFOLLOW)), shown);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'ENOTDIR') {
      const st = await fsp.lstat(p).catch(() => undefined);
      throw new UnsafeFileError(shown, st ? describeKind(st) : 'not a directory', 'a directory');
    }
    throw err;
  }
}

/**
 * Opens the folder `rel` below `root` (a path, whose last component may be a link: the operator chose
 * it; or a folder held open), one component at a time, never following a symlink below the root; with `create`, missing
 * components are made (`mode`) and their parents fsynced. Throws UnsafeFileError naming the
 * component that is a link or not a directory.
 */
export async function openDirInside(
  root: string | DirHandle,
  rel: string,
  opts: { create?: boolean; mode?: number } = {},
): Promise<DirHandle> {
  const rootPath = typeof root === 'string' ? root : root.path;
  const parts = rel.split('/').filter((s) => s !== '' && s !== '.');
  if (parts.includes('..')) throw new UnsafePathError(`refusing a path that climbs out of ${rootPath}: ${rel}`);
  // A root held open is opened again through its descriptor: the very folder, whatever its path leads to now.
  let dir = await openDir(typeof root === 'string' ? root : root.self(), true, rootPath);
  try {
    let shown = rootPath;
    for (const part of parts) {
      shown = path.join(shown, part);
      const p = dir.at(part);
      if (opts.create) {
        try {
          await fsp.mkdir(p, { mode: opts.mode ?? 0o755 });
          await dir.sync();
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        }
      }
      const next = await openDir(p, false, shown);
      await dir.close();
      dir = next;
    }
    return dir;
  } catch (err) {
    await dir.close().catch(() => undefined);
    throw err;
  }
}

/**
 * Opens an existing file for reading with O_NOFOLLOW | O_NONBLOCK (a FIFO or a device swapped in
 * cannot make open(2) wait) and checks on the descriptor that it is a regular file.
 */
export async function openRegularNoFollow(
  p: string | Buffer,
  shown: string,
  calls: FileCalls = FileCalls.POOL,
): Promise<{ fd: number; stat: fs.Stats }> {
  let fd: number;
  try {
    fd = await calls.open(p, C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw new UnsafeFileError(shown, 'a symbolic link', 'a regular file');
    // A Unix socket cannot be opened at all (ENXIO); it is no file to send either.
    if (code === 'ENXIO' || code === 'EOPNOTSUPP') throw new UnsafeFileError(shown, 'a socket', 'a regular file');
    throw err;
  }
  try {
    const stat = await calls.fstat(fd);
    if (!stat.isFile()) throw new UnsafeFileError(shown, describeKind(stat), 'a regular file');
    return { fd, stat };
  } catch (err) {
    await calls.close(fd);
    throw err;
  }
}

/**
 * Creates `name` in `dir` with O_CREAT | O_EXCL | O_NOFOLLOW — never through a link, never over
 * an existing file — and sets its mode (whatever the umask) and group on the descriptor.
 */
export async function createExclusive(dir: DirHandle, name: string, mode: number, gid?: number): Promise<fsp.FileHandle> {
  const handle = await fsp.open(dir.at(name), C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, mode);
  try {
    await handle.chmod(mode);
    if (gid !== undefined) await handle.chown(-1, gid);
    return handle;
  } catch (err) {
    await handle.close();
    throw err;
  }
}
