/**
 * Where the content of a SOAP upload goes while the envelope is read: the base64 text of the
 * `Content`/`ContentBase64` element decoded into a content file as it arrives (hashed, counted, its
 * first bytes kept for routing), so that no parcel is ever a whole string in memory.
 */
import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { Base64Decoder, InvalidBase64Error } from '@gridsync/protocol/encoding';
import { HEAD_BYTES, type StoredContent } from '../content.js';
import type { World } from '../context.js';
import { RET, fault } from './fault.js';

/** The elements whose text is parcel content, decoded as it arrives. */
export const CONTENT_ELEMENTS: ReadonlySet<string> = new Set(['Content', 'ContentBase64']);

/** Removes an upload's content file that no parcel took. */
export async function discardUpload(world: World, content: StoredContent | undefined): Promise<void> {
  if (content) await fs.promises.rm(world.store.contentPath(content.name), { force: true });
}

/** Decodes streamed base64 content (whitespace allowed, as XML Schema allows it) into a content file. */
export class ContentSink {
  private readonly name = `tmp-${randomUUID()}`;
  private out: fs.WriteStream | undefined;
  private readonly decoder = new Base64Decoder();
  private readonly hash = createHash('sha256');
  private readonly head: Buffer[] = [];
  private headBytes = 0;

  constructor(private readonly world: World) {}

  async push(text: string): Promise<void> {
    const clean = /\s/.test(text) ? text.replace(/\s+/g, '') : text;
    if (clean === '') return;
    this.out ??= fs.createWriteStream(this.world.store.contentPath(this.name));
    let buf: Buffer;
    try {
      buf = this.decoder.push(clean);
    } catch (err) {
      if (err instanceof InvalidBase64Error) throw fault(RET.InvalidDataType, `Content is not valid base64: ${err.message}`, 'Content');
      throw err;
    }
    if (buf.length === 0) return;
    if (this.decoder.bytes > this.world.settings.maxUploadBytes) {
      throw fault(
        RET.InvalidDataLength,
        `Content is larger than the maximum parcel size (max=${this.world.settings.maxUploadBytes})`,
        'Content',
      );
    }
    this.hash.update(buf);
    if (this.headBytes < HEAD_BYTES) {
      this.head.push(buf.subarray(0, HEAD_BYTES - this.headBytes));
      this.headBytes += Math.min(buf.length, HEAD_BYTES - this.headBytes);
    }
    if (!this.out.write(buf)) await new Promise<void>((r) => this.out?.once('drain', () => r()));
  }

  async finish(): Promise<StoredContent | undefined> {
    if (!this.out) return undefined;
    try {
      this.decoder.end();
    } catch (err) {
      if (err instanceof InvalidBase64Error) throw fault(RET.InvalidDataType, `Content is not valid base64: ${err.message}`, 'Content');
      throw err;
    }
    const out = this.out;
    await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
    return { name: this.name, bytes: this.decoder.bytes, sha256: this.hash.digest('hex'), head: Buffer.concat(this.head) };
  }

  async discard(): Promise<void> {
    this.out?.destroy();
    if (this.out) await fs.promises.rm(this.world.store.contentPath(this.name), { force: true });
  }
}
