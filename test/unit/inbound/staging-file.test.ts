// The staging file of a download, from the outside: what ends on disk for small and large content,
// on both call paths (inline and thread pool), after a broken attempt and a retry.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileCalls, SMALL_FILE_BYTES } from '../../../src/files/index.js';
import { StagingFile } from '../../../src/inbound/staging-file.js';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-staging-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

async function writeAll(w: NodeJS.WritableStream, data: Buffer, chunk: number): Promise<void> {
  for (let off = 0; off < data.length; off += chunk) {
    // The transport reuses its buffer after each write's callback: so does this test.
    const reused = Buffer.from(data.subarray(off, off + chunk));
    await new Promise<void>((resolve, reject) => w.write(reused, (err) => (err ? reject(err) : resolve())));
    reused.fill(0);
  }
}

describe.each([
  ['inline', FileCalls.INLINE],
  ['thread pool', FileCalls.POOL],
])('staging file (%s calls)', (_name, calls) => {
  it.each([
    ['empty', 0],
    ['small', 5 * 1024],
    ['exactly the small limit', SMALL_FILE_BYTES],
    ['large (streamed to the file)', 3 * SMALL_FILE_BYTES + 17],
  ])('%s content ends on disk byte for byte, mode as asked', async (_what, size) => {
    const part = path.join(dir, 'p.part');
    const data = Buffer.from(Array.from({ length: size }, (_v, i) => (i * 7) % 251));
    const target = new StagingFile(part, 0o640, calls);
    await writeAll(await target.openAttempt(), data, 64 * 1024);
    await target.finish();
    expect(sha(fs.readFileSync(part))).toBe(sha(data));
    expect(fs.statSync(part).mode & 0o777 & ~process.umask()).toBe(0o640 & ~process.umask());
  });

  it('a broken attempt leaves nothing behind; the retry starts from an empty file', async () => {
    const part = path.join(dir, 'p.part');
    const target = new StagingFile(part, 0o640, calls);
    await writeAll(await target.openAttempt(), Buffer.alloc(2 * SMALL_FILE_BYTES, 1), 64 * 1024);
    await target.discardAttempt();
    expect(fs.existsSync(part)).toBe(false);
    const again = Buffer.alloc(1000, 2);
    await writeAll(await target.openAttempt(), again, 100);
    await target.finish();
    expect(fs.readFileSync(part)).toEqual(again);
  });

  it('a .part left by a crashed run is replaced, not appended to', async () => {
    const part = path.join(dir, 'p.part');
    fs.writeFileSync(part, Buffer.alloc(4096, 9));
    const target = new StagingFile(part, 0o640, calls);
    await writeAll(await target.openAttempt(), Buffer.from('ISA*00~'), 7);
    await target.finish();
    expect(fs.readFileSync(part, 'utf8')).toBe('ISA*00~');
  });

  it('never writes through a link planted under the .part name', async () => {
    const victim = path.join(dir, 'victim');
    fs.writeFileSync(victim, 'precious');
    const part = path.join(dir, 'p.part');
    fs.symlinkSync(victim, part);
    const target = new StagingFile(part, 0o640, calls);
    const w = await target.openAttempt();
    await writeAll(w, Buffer.from('x'), 1);
    await expect(target.finish()).rejects.toThrow(/ELOOP|symbolic/i);
    expect(fs.readFileSync(victim, 'utf8')).toBe('precious');
  });
});
