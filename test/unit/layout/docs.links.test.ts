/**
 * The repository explains itself: every relative link in README.md and docs/ leads to a file of
 * the repository, and every #anchor to a heading or an explicit id there. Links to outside notes
 * would fail here too (the file does not exist in a clone).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../../..');
const pages = [
  'README.md',
  ...fs
    .readdirSync(path.join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes. */
const slug = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');

function anchors(file: string): Set<string> {
  const text = fs.readFileSync(path.join(root, file), 'utf8').replace(/```[\s\S]*?```/g, '');
  const out = new Set<string>();
  for (const m of text.matchAll(/^#{1,6} (.+)$/gm)) out.add(slug((m[1] as string).replace(/`/g, '')));
  for (const m of text.matchAll(/<a id="([^"]+)"/g)) out.add(m[1] as string);
  return out;
}

describe('links in README.md and docs/', () => {
  it('every relative link and anchor resolves inside the repository', () => {
    const broken: string[] = [];
    for (const page of pages) {
      const text = fs.readFileSync(path.join(root, page), 'utf8').replace(/```[\s\S]*?```/g, '');
      for (const m of text.matchAll(/\[[^\]]*\]\(([^)\s]+)\)/g)) {
        const target = m[1] as string;
        if (/^[a-z]+:/.test(target)) continue;
        const [file, frag] = target.split('#') as [string, string | undefined];
        const resolved = file === '' ? page : path.normalize(path.join(path.dirname(page), file));
        if (!fs.existsSync(path.join(root, resolved))) {
          broken.push(`${page}: ${target} (no such file)`);
          continue;
        }
        if (frag && resolved.endsWith('.md') && !anchors(resolved).has(frag)) broken.push(`${page}: ${target} (no such anchor)`);
      }
    }
    expect(broken).toEqual([]);
  });
});
