// One concept per file, and a file a reader takes in at one sitting: no source file of the daemon or
// of either package grows past 450 lines (daemon.ts was once 881, one class holding nine concerns).
// A file that reaches the limit is split where its concepts part, not trimmed of comments.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../../..');
const MAX_LINES = 450;

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

describe('file size', () => {
  it(`no source file is over ${MAX_LINES} lines`, () => {
    const files = ['src', 'packages/protocol/src', 'packages/emulator/src'].flatMap((d) => sources(path.join(root, d)));
    expect(files.length).toBeGreaterThan(200);
    const over = files
      .map((f) => ({ file: path.relative(root, f), lines: fs.readFileSync(f, 'utf8').split('\n').length - 1 }))
      .filter((f) => f.lines > MAX_LINES)
      .map((f) => `${f.file}: ${f.lines}`);
    expect(over).toEqual([]);
  });
});
