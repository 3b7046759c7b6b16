/** The code is kept in one format (prettier, `.prettierrc.json`): `npm run format` fixes what this finds. */
import fs from 'node:fs';
import path from 'node:path';
import * as prettier from 'prettier';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../../..');

function files(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'results' || e.name === 'node_modules' || e.name === 'dist' ? [] : files(p);
    return /\.(ts|mjs)$/.test(e.name) ? [p] : [];
  });
}

describe('formatting', () => {
  it('every source, test and bench file is formatted', async () => {
    const unformatted: string[] = [];
    for (const file of ['src', 'packages', 'test', 'bench'].flatMap((d) => files(path.join(root, d)))) {
      const options = await prettier.resolveConfig(file);
      if (!(await prettier.check(fs.readFileSync(file, 'utf8'), { ...options, filepath: file })))
        unformatted.push(path.relative(root, file));
    }
    expect(unformatted, 'run npm run format').toEqual([]);
  }, 60_000);
});
