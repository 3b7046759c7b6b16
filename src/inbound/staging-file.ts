/**
 * The staging file of one download (`<stagingDir>/<mailbox>-<parcel>.part`): written, fsynced and
 * closed before the pipeline may rename it into the inbox.
 *
 * Month-end bursts are thousands of parcels of a few kilobytes, and on such a parcel each call
 * handed to libuv's thread pool (open, write, fsync, close: a thread woken and the loop woken
 * back for each) cost more CPU than the work itself. So a download is held in memory until it
 * passes SMALL_BYTES; a parcel that ends below it is written with one open, one write and one
 * close on the calling thread (page-cache work of microseconds on a local disk) and only its
 * fsync goes to the thread pool. A larger one turns into a stream to the file at that point:
 * writes on the thread pool, a background fsync every 32 MiB so that the fsync before placement
 * only has the tail left (a 500 MB parcel otherwise waited ~0.5 s for it at the end).
 *
 * `inline: false` (a staging folder on a network filesystem, where a call can hang for as long as
 * the server does) sends every call to the thread pool so that the event loop never waits on it.
 */
import fs from 'node:fs';
import { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { DownloadTarget } from '../api/index.js';

/** Downloads up to this size are assembled in memory and written with one call. */
export const SMALL_BYTES = 256 * 1024;
/** A large download is fsynced in the background every this many bytes. */
const SYNC_EVERY = 32 * 1024 * 1024;
const C = fs.constants;
const OPEN_FLAGS = C.O_WRONLY | C.O_CREAT | C.O_TRUNC | C.O_NOFOLLOW;

const call = <T>(fn: (cb: (err: NodeJS.ErrnoException | null, v: T) => void) => void): Promise<T> =>
  new Promise<T>((resolve, reject) => fn((err, v) => (err ? reject(err) : resolve(v))));

/** One attempt's destination: memory first, the file once the content outgrows SMALL_BYTES. */
class StagingWritable extends Writable {
  private chunks: Buffer[] = [];
  private held = 0;
  private fd: number | undefined;
  private position = 0;
  private syncedAt = 0;
  private backgroundSync: Promise<void> | undefined;

  constructor(
    private readonly part: string,
    private readonly mode: number,
    private readonly inline: boolean,
  ) {
    super({ highWaterMark: 1024 * 1024 });
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    if (this.fd === undefined && this.held + chunk.length <= SMALL_BYTES) {
      // The transport reuses its buffers once this callback has run: keep a copy.
      this.chunks.push(Buffer.from(chunk));
      this.held += chunk.length;
      cb();
      return;
    }
    this.toFile(chunk).then(() => cb(), cb);
  }

  override _final(cb: (err?: Error | null) => void): void {
    this.finishFile().then(() => cb(), cb);
  }

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    this.chunks = [];
    const fd = this.fd;
    this.fd = undefined;
    if (fd === undefined) return cb(err);
    void (this.backgroundSync ?? Promise.resolve()).then(() => fs.close(fd, () => cb(err)));
  }

  private async open(): Promise<number> {
    return this.inline
      ? fs.openSync(this.part, OPEN_FLAGS, this.mode)
      : call<number>((cb) => fs.open(this.part, OPEN_FLAGS, this.mode, cb));
  }

  private async writeAll(fd: number, buf: Buffer): Promise<void> {
    for (let off = 0; off < buf.length;) {
      const n =
        this.inline && buf.length <= SMALL_BYTES
          ? fs.writeSync(fd, buf, off, buf.length - off, this.position)
          : await call<number>((cb) => fs.write(fd, buf, off, buf.length - off, this.position, cb));
      off += n;
      this.position += n;
    }
  }

  /** The content outgrew memory (or this chunk is the first past it): from now on it streams to the file. */
  private async toFile(chunk: Buffer): Promise<void> {
    if (this.fd === undefined) {
      this.fd = await this.open();
      const held = Buffer.concat(this.chunks, this.held);
      this.chunks = [];
      this.held = 0;
      await this.writeAll(this.fd, held);
    }
    await call<number>((cb) => fs.write(this.fd as number, chunk, 0, chunk.length, this.position, cb));
    this.position += chunk.length;
    if (!this.backgroundSync && this.position - this.syncedAt >= SYNC_EVERY) {
      const fd = this.fd;
      const at = this.position;
      this.backgroundSync = call<void>((cb) => fs.fsync(fd, cb)).then(
        () => {
          this.syncedAt = at;
          this.backgroundSync = undefined;
        },
        () => {
          this.backgroundSync = undefined; // the final fsync reports the error
        },
      );
    }
  }

  /** Writes what memory holds, fsyncs, closes: the file is durable when this resolves. */
  private async finishFile(): Promise<void> {
    if (this.fd === undefined) {
      this.fd = await this.open();
      const held = this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks, this.held);
      this.chunks = [];
      await this.writeAll(this.fd, held);
    }
    await this.backgroundSync;
    const fd = this.fd;
    await call<void>((cb) => fs.fsync(fd, cb));
    this.fd = undefined;
    if (this.inline) fs.closeSync(fd);
    else await call<void>((cb) => fs.close(fd, cb));
  }
}

/** Each attempt starts a new, empty file (a retried download never appends); a failed attempt's file is removed. */
export class StagingFile implements DownloadTarget {
  private stream: StagingWritable | undefined;

  constructor(
    private readonly part: string,
    private readonly mode: number,
    private readonly inline: boolean,
  ) {}

  async openAttempt(): Promise<Writable> {
    // A .part left by a crashed run needs no removal first: the open truncates it.
    if (this.stream) await this.discardAttempt();
    this.stream = new StagingWritable(this.part, this.mode, this.inline);
    return this.stream;
  }

  /** Ends the last attempt; resolves once its file is written, fsynced and closed. */
  async finish(): Promise<void> {
    const stream = this.stream;
    if (!stream) throw new Error(`${this.part}: the download wrote no file`);
    stream.end();
    await finished(stream);
  }

  async discardAttempt(): Promise<void> {
    const stream = this.stream;
    this.stream = undefined;
    if (stream) {
      stream.destroy();
      await new Promise<void>((resolve) => (stream.closed ? resolve() : stream.once('close', () => resolve())));
    }
    try {
      if (this.inline) fs.unlinkSync(this.part);
      else await fs.promises.unlink(this.part);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
}
