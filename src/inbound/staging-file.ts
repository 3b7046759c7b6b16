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
 * On a network filesystem (FileCalls.POOL) every call goes to the thread pool, so that the event
 * loop never waits for the server.
 */
import fs from 'node:fs';
import { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { DownloadTarget } from '../api/index.js';
import { FileCalls, fsyncFd, SMALL_FILE_BYTES } from '../files/index.js';
import { InternalError } from '../errors/index.js';

/** Downloads up to this size are assembled in memory and written with one call. */
const SMALL_BYTES = SMALL_FILE_BYTES;
/** A large download is fsynced in the background every this many bytes. */
const SYNC_EVERY = 32 * 1024 * 1024;
const C = fs.constants;
const OPEN_FLAGS = C.O_WRONLY | C.O_CREAT | C.O_TRUNC | C.O_NOFOLLOW;

/** One attempt's destination: memory first, the file once the content outgrows SMALL_BYTES. */
class StagingWritable extends Writable {
  private chunks: Buffer[] = [];
  private held = 0;
  private fd: number | undefined;
  private position = 0;
  private syncedAt = 0;
  private backgroundSync: Promise<void> | undefined;
  private inFlight: Promise<void> | undefined;

  constructor(
    private readonly part: string,
    private readonly mode: number,
    private readonly calls: FileCalls,
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
    this.track(this.toFile(chunk)).then(() => cb(), cb);
  }

  override _final(cb: (err?: Error | null) => void): void {
    this.track(this.finishFile()).then(() => cb(), cb);
  }

  /**
   * Closes the descriptor only once no call on it is in flight: closing under a pending write
   * would let the write land in whatever file reuses the descriptor's number.
   */
  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    this.chunks = [];
    void Promise.all([this.inFlight, this.backgroundSync]).then(() => {
      const fd = this.fd;
      this.fd = undefined;
      if (fd === undefined) cb(err);
      else fs.close(fd, () => cb(err));
    });
  }

  /** Remembers the call in flight (settled, never rejected) for _destroy. */
  private track(op: Promise<void>): Promise<void> {
    this.inFlight = op.catch(() => undefined);
    return op;
  }

  /** What memory holds, written with one call (at most SMALL_BYTES: cheap inline). */
  private async writeHeld(fd: number): Promise<void> {
    const held = this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks, this.held);
    this.chunks = [];
    this.held = 0;
    await this.calls.writeAll(fd, held, this.position);
    this.position += held.length;
  }

  /** The content outgrew memory (or this chunk is the first past it): from now on it streams to the file. */
  private async toFile(chunk: Buffer): Promise<void> {
    if (this.fd === undefined) {
      this.fd = await this.calls.open(this.part, OPEN_FLAGS, this.mode);
      await this.writeHeld(this.fd);
    }
    // Large content: its writes go to the thread pool whatever the filesystem.
    await FileCalls.POOL.writeAll(this.fd, chunk, this.position);
    this.position += chunk.length;
    if (!this.backgroundSync && this.position - this.syncedAt >= SYNC_EVERY) {
      const fd = this.fd;
      const at = this.position;
      this.backgroundSync = fsyncFd(fd).then(
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
      this.fd = await this.calls.open(this.part, OPEN_FLAGS, this.mode);
      await this.writeHeld(this.fd);
    }
    await this.backgroundSync;
    const fd = this.fd;
    await fsyncFd(fd);
    this.fd = undefined;
    await this.calls.close(fd);
  }
}

/** Each attempt starts a new, empty file (a retried download never appends); a failed attempt's file is removed. */
export class StagingFile implements DownloadTarget {
  private stream: StagingWritable | undefined;

  constructor(
    private readonly part: string,
    private readonly mode: number,
    private readonly calls: FileCalls,
  ) {}

  async openAttempt(): Promise<Writable> {
    // A .part left by a crashed run needs no removal first: the open truncates it.
    if (this.stream) await this.discardAttempt();
    this.stream = new StagingWritable(this.part, this.mode, this.calls);
    return this.stream;
  }

  /** Ends the last attempt; resolves once its file is written, fsynced and closed. */
  async finish(): Promise<void> {
    const stream = this.stream;
    if (!stream) throw new InternalError(`${this.part}: the download wrote no file`);
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
    await this.calls.unlinkIfExists(this.part);
  }
}
