// A folder held open resolves names through its descriptor (/proc/self/fd/N/name): an error of a
// file call in it must name the folder as the operator knows it, not the descriptor.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDirInside } from '../../../src/files/index.js';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

describe('DirHandle.shownError', () => {
  it('a failed rename into the held folder names the real folder, in the message and the dest', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-shown-'));
    dirs.push(root);
    fs.writeFileSync(path.join(root, 'file'), 'x');
    fs.mkdirSync(path.join(root, 'sub', 'taken'), { recursive: true });
    const dir = await openDirInside(root, 'sub');
    try {
      const err = (await fs.promises.rename(path.join(root, 'file'), dir.at('taken')).catch((e: unknown) => dir.shownError(e))) as Error & {
        dest?: string;
      };
      expect(err).toBeInstanceOf(Error);
      expect(err.message).not.toContain('/proc/self/fd');
      expect(err.message).toContain(path.join(root, 'sub', 'taken'));
      expect(err.dest).toBe(path.join(root, 'sub', 'taken'));
    } finally {
      await dir.close();
    }
  });
});
