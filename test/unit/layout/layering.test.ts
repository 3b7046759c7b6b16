/**
 * The folder layering of src/ (docs/architecture.md "Folders and layers"): a module may import
 * from its own folder and from folders of a lower layer, never upwards or sideways — so a reader
 * knows from a path what a file may depend on, and no import cycle can form between concerns. A
 * folder is entered through its index.ts: what it exports there is its interface.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const src = path.resolve(import.meta.dirname, '../../../src');

/** Top-level folder (or root file) → layer. Higher layers may import lower ones. */
const LAYERS: Record<string, number> = {
  cli: 7,
  daemon: 6,
  service: 5,
  callbacks: 5,
  inbound: 4,
  outbound: 4,
  emulator: 4,
  config: 3,
  api: 2,
  journal: 2,
  files: 1,
  edi: 1,
  events: 1,
  errors: 0,
  'log.ts': 0,
  'version.ts': 0,
};

/** Leaf modules that import nothing of ours and may be read from any layer. */
const ANYWHERE = new Set(['config/defaults.ts', 'config/redact.ts']);

function files(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

const topOf = (rel: string): string => rel.split('/')[0] as string;

function imports(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  return [
    ...text.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s+'(\.{1,2}\/[^']+)'/g),
    ...text.matchAll(/import\(\s*'(\.{1,2}\/[^']+)'\s*\)/g),
  ].map((m) => path.relative(src, path.resolve(path.dirname(file), (m[1] as string).replace(/\.js$/, '.ts'))));
}

describe('src/ layering', () => {
  const all = files(src).map((f) => path.relative(src, f));

  it('every top-level folder and root file has a layer', () => {
    const unknown = [...new Set(all.map(topOf))].filter((t) => !(t in LAYERS));
    expect(unknown).toEqual([]);
  });

  it('imports only go to the same folder or downwards', () => {
    const violations: string[] = [];
    for (const rel of all) {
      const from = topOf(rel);
      for (const target of imports(path.join(src, rel))) {
        const to = topOf(target);
        if (to === from || ANYWHERE.has(target)) continue;
        if ((LAYERS[to] ?? Infinity) >= (LAYERS[from] ?? -1)) violations.push(`${rel} → ${target}`);
      }
    }
    expect(violations).toEqual([]);
  });

  it('another folder is entered through its index.ts, never by a deep import', () => {
    const deep: string[] = [];
    for (const rel of all) {
      for (const target of imports(path.join(src, rel))) {
        if (topOf(target) === topOf(rel) || ANYWHERE.has(target) || !target.includes('/')) continue;
        if (!target.endsWith('/index.ts')) deep.push(`${rel} → ${target}`);
      }
    }
    expect(deep).toEqual([]);
  });

  it('the leaf modules import nothing of ours', () => {
    for (const leaf of ANYWHERE) expect(imports(path.join(src, leaf))).toEqual([]);
  });
});
