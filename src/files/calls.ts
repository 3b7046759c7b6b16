/**
 * The cheap file calls the pipelines make for every item — lstat, rename, link, unlink,
 * open/read/write of a small file — made on the event loop's thread when every folder involved is
 * on a local filesystem, on libuv's thread pool otherwise (see filesystem-kind.ts for why). fsync
 * never runs inline: it waits for the disk.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';

/**
 * A file up to this size is read or written with one call, inline on a local filesystem; a larger
 * one is streamed through the thread pool whatever the filesystem (an inline call on it would
 * hold the event loop for as long as the disk takes).
 */
export const SMALL_FILE_BYTES = 256 * 1024;

export class FileCalls {
  /** Thread-pool calls everywhere: what a folder of unknown kind gets. */
  static readonly POOL = new FileCalls(false);
  static readonly INLINE = new FileCalls(true);

  private constructor(readonly inline: boolean) {}

  static of(inline: boolean): FileCalls {
    return inline ? FileCalls.INLINE : FileCalls.POOL;
  }

  /** lstat, undefined when nothing is there (never follows a link). */
  lstat(p: string | Buffer): Promise<fs.Stats | undefined> {
    // Inline, a missing file is an answer, not an exception: building the error (its stack, its
    // message) cost more than the lstat, and an outbound file makes three such probes.
    return this.statIfThere(p, fs.lstatSync, fsp.lstat);
  }

  /** stat (a link followed), undefined when nothing is there. */
  stat(p: string): Promise<fs.Stats | undefined> {
    return this.statIfThere(p, fs.statSync, fsp.stat);
  }

  private async statIfThere(
    p: string | Buffer,
    inline: typeof fs.lstatSync,
    pooled: (p: string | Buffer) => Promise<fs.Stats>,
  ): Promise<fs.Stats | undefined> {
    try {
      return this.inline ? inline(p, { throwIfNoEntry: false }) : await pooled(p);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
      throw err;
    }
  }

  async exists(p: string | Buffer): Promise<boolean> {
    try {
      return (await this.lstat(p)) !== undefined;
    } catch {
      return false;
    }
  }

  async rename(from: string | Buffer, to: string | Buffer): Promise<void> {
    if (this.inline) fs.renameSync(from, to);
    else await fsp.rename(from, to);
  }

  /**
   * A second name for a file. Unlike rename it never replaces what is at `to` (EEXIST, whatever is
   * there, a link included), and a link at `from` is not followed.
   */
  async link(from: string | Buffer, to: string | Buffer): Promise<void> {
    if (this.inline) fs.linkSync(from, to);
    else await fsp.link(from, to);
  }

  /** Removes a file; nothing there is fine. */
  async unlinkIfExists(p: string | Buffer): Promise<void> {
    try {
      if (this.inline) fs.unlinkSync(p);
      else await fsp.unlink(p);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }

  async open(p: string | Buffer, flags: number, mode?: number): Promise<number> {
    return this.inline ? fs.openSync(p, flags, mode) : await callback<number>((cb) => fs.open(p, flags, mode, cb));
  }

  async close(fd: number): Promise<void> {
    if (this.inline) fs.closeSync(fd);
    else await callback<void>((cb) => fs.close(fd, cb));
  }

  async fstat(fd: number): Promise<fs.Stats> {
    return this.inline ? fs.fstatSync(fd) : await callback<fs.Stats>((cb) => fs.fstat(fd, cb));
  }

  /** Reads up to `length` bytes at `position`. */
  async read(fd: number, buf: Buffer, offset: number, length: number, position: number): Promise<number> {
    return this.inline
      ? fs.readSync(fd, buf, offset, length, position)
      : await callback<number>((cb) => fs.read(fd, buf, offset, length, position, cb));
  }

  /** Writes all of `buf` at `position`. */
  async writeAll(fd: number, buf: Buffer, position: number): Promise<void> {
    for (let off = 0; off < buf.length;) {
      off += this.inline
        ? fs.writeSync(fd, buf, off, buf.length - off, position + off)
        : await callback<number>((cb) => fs.write(fd, buf, off, buf.length - off, position + off, cb));
    }
  }

  async fchmod(fd: number, mode: number): Promise<void> {
    if (this.inline) fs.fchmodSync(fd, mode);
    else await callback<void>((cb) => fs.fchmod(fd, mode, cb));
  }

  async fchown(fd: number, uid: number, gid: number): Promise<void> {
    if (this.inline) fs.fchownSync(fd, uid, gid);
    else await callback<void>((cb) => fs.fchown(fd, uid, gid, cb));
  }

  /**
   * A file's size and a reader of its content; each call of `chunks` reads it afresh (a retried
   * request re-reads it). A small file is read in one call.
   */
  async source(p: string): Promise<{ size: number; chunks: () => AsyncIterable<Buffer> }> {
    const size = (this.inline ? fs.statSync(p) : await fsp.stat(p)).size;
    if (this.inline && size <= SMALL_FILE_BYTES) {
      return {
        size,
        chunks: async function* () {
          yield fs.readFileSync(p);
        },
      };
    }
    return { size, chunks: () => fs.createReadStream(p, { highWaterMark: 64 * 1024 }) };
  }
}

/** fsync of a descriptor, always on the thread pool. */
export function fsyncFd(fd: number): Promise<void> {
  return callback<void>((cb) => fs.fsync(fd, cb));
}

function callback<T>(fn: (cb: (err: NodeJS.ErrnoException | null, v: T) => void) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => fn((err, v) => (err ? reject(err) : resolve(v))));
}
