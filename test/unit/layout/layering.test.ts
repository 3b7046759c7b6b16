/**
 * The layering (docs/architecture.md "Packages, folders and layers"). Three packages, arrows only downwards:
 * the daemon (src/) and the emulator (packages/emulator) both stand on the protocol
 * (packages/protocol), which stands on nothing of ours; the daemon loads the emulator only when
 * asked for it. Inside each package a module imports from its own folder and from folders of a
 * lower layer, never upwards or sideways — so a reader knows from a path what a file may depend on,
 * and no import cycle can form between concerns. A folder is entered through its index.ts: what it
 * exports there is its interface; a package through the entry points its package.json exports.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../../..');
const src = path.join(root, 'src');
const protocolSrc = path.join(root, 'packages/protocol/src');
const emulatorSrc = path.join(root, 'packages/emulator/src');

/** Top-level folder (or root file) of src/ → layer. Higher layers may import lower ones. */
const LAYERS: Record<string, number> = {
  cli: 7,
  daemon: 6,
  service: 5,
  callbacks: 5,
  inbound: 4,
  outbound: 4,
  config: 3,
  api: 2,
  journal: 2,
  files: 1,
  events: 1,
  work: 1,
  errors: 0,
  'log.ts': 0,
  'version.ts': 0,
};

/** The protocol package's folders → layer. */
const PROTOCOL_LAYERS: Record<string, number> = {
  catalog: 2,
  soap: 1,
  encoding: 1,
  wire: 1,
  edi: 0,
  errors: 0,
  issues: 0,
};

/** Leaf modules that import nothing of ours and may be read from any layer. */
const ANYWHERE = new Set(['config/defaults.ts', 'config/redact.ts']);

/** Where the daemon may load the emulator: the command that is the emulator (itself loaded on demand by cli/main.ts), and `connectService` for `baseUrl: embedded`. */
const LOADS_EMULATOR = new Set(['cli/emulator.ts', 'service/connect.ts']);

function files(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

const topOf = (rel: string): string => rel.split('/')[0] as string;

interface Import {
  spec: string;
  dynamic: boolean;
}

function importsOf(file: string): Import[] {
  const text = fs.readFileSync(file, 'utf8');
  return [
    ...[...text.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s+'([^']+)'/g)].map((m) => ({ spec: m[1] as string, dynamic: false })),
    ...[...text.matchAll(/import\(\s*'([^']+)'\s*\)/g)].map((m) => ({ spec: m[1] as string, dynamic: true })),
    ...[...text.matchAll(/(?:^|\n)\s*import\s+'([^']+)'/g)].map((m) => ({ spec: m[1] as string, dynamic: false })),
  ];
}

/** Relative imports of `file`, as paths relative to `base` (a path that leaves `base` starts with `..`). */
function relativeImports(file: string, base: string): string[] {
  return importsOf(file)
    .filter((i) => i.spec.startsWith('.'))
    .map((i) => path.relative(base, path.resolve(path.dirname(file), i.spec.replace(/\.js$/, '.ts'))));
}

const ours = (file: string): Import[] => importsOf(file).filter((i) => i.spec.startsWith('@gridsync/'));

/** The layering rules of one package's folders: same folder, or a lower layer, entered through index.ts. */
function layeringViolations(base: string, layers: Record<string, number>, anywhere: ReadonlySet<string> = new Set()): string[] {
  const violations: string[] = [];
  for (const rel of files(base).map((f) => path.relative(base, f))) {
    const from = topOf(rel);
    for (const target of relativeImports(path.join(base, rel), base)) {
      const to = topOf(target);
      if (target.startsWith('..')) violations.push(`${rel} → ${target} (outside its package)`);
      else if (to === from || anywhere.has(target)) continue;
      else if ((layers[to] ?? Infinity) >= (layers[from] ?? -1)) violations.push(`${rel} → ${target} (upwards or sideways)`);
      else if (target.includes('/') && !target.endsWith('/index.ts')) violations.push(`${rel} → ${target} (not through its index.ts)`);
    }
  }
  return violations;
}

/** The entry points of a package: its package.json exports, each an index.ts folder of its sources. */
function entryPoints(pkg: string): string[] {
  const manifest = JSON.parse(fs.readFileSync(path.join(root, 'packages', pkg, 'package.json'), 'utf8')) as {
    name: string;
    exports: Record<string, unknown>;
  };
  return Object.keys(manifest.exports).map((k) => (k === '.' ? manifest.name : `${manifest.name}/${k.slice(2)}`));
}

describe('src/ layering', () => {
  const all = files(src).map((f) => path.relative(src, f));

  it('every top-level folder and root file has a layer, and every layer a folder', () => {
    const tops = new Set(all.map(topOf));
    expect([...tops].filter((t) => !(t in LAYERS))).toEqual([]);
    expect(Object.keys(LAYERS).filter((t) => !tops.has(t))).toEqual([]);
    const protocolTops = new Set(files(protocolSrc).map((f) => topOf(path.relative(protocolSrc, f))));
    expect([...protocolTops].sort()).toEqual(Object.keys(PROTOCOL_LAYERS).sort());
  });

  it('imports only go to the same folder or downwards, through index.ts', () => {
    expect(layeringViolations(src, LAYERS, ANYWHERE)).toEqual([]);
  });

  it('the leaf modules import nothing of ours', () => {
    for (const leaf of ANYWHERE) expect(importsOf(path.join(src, leaf))).toEqual([]);
  });

  it('the daemon reaches the other packages only through their entry points, and loads the emulator only on demand', () => {
    const allowed = new Set(entryPoints('protocol'));
    const wrong: string[] = [];
    for (const rel of all)
      for (const i of ours(path.join(src, rel))) {
        if (allowed.has(i.spec)) continue;
        if (i.spec === '@gridsync/emulator' && LOADS_EMULATOR.has(rel)) continue;
        wrong.push(`${rel} → ${i.spec}`);
      }
    expect(wrong).toEqual([]);
    // connectService imports it only when the config says embedded; the emulator command is
    // itself imported only when it is the command run.
    expect(ours(path.join(src, 'service/connect.ts')).filter((i) => i.spec === '@gridsync/emulator' && !i.dynamic)).toEqual([]);
    const main = importsOf(path.join(src, 'cli/main.ts'));
    expect(main.filter((i) => i.spec === './emulator.js').map((i) => i.dynamic)).toEqual([true]);
  });
});

describe('packages/ layering', () => {
  it('the protocol imports nothing of ours outside itself, and its folders are layered', () => {
    expect(files(protocolSrc).flatMap((f) => ours(f).map((i) => `${path.relative(protocolSrc, f)} → ${i.spec}`))).toEqual([]);
    expect(layeringViolations(protocolSrc, PROTOCOL_LAYERS)).toEqual([]);
  });

  it('the emulator imports only the protocol, through its entry points, and nothing of the daemon', () => {
    const allowed = new Set(entryPoints('protocol'));
    const wrong: string[] = [];
    for (const f of files(emulatorSrc)) {
      const rel = path.relative(emulatorSrc, f);
      for (const i of ours(f)) if (!allowed.has(i.spec)) wrong.push(`${rel} → ${i.spec}`);
      for (const target of relativeImports(f, emulatorSrc)) if (target.startsWith('..')) wrong.push(`${rel} → ${target}`);
    }
    expect(wrong).toEqual([]);
  });

  it("each entry point is a folder's index.ts, and the typecheck and the tests map it to that source", () => {
    const tsconfig = fs.readFileSync(path.join(root, 'tsconfig.json'), 'utf8');
    for (const entry of entryPoints('protocol')) {
      const folder = entry.slice('@gridsync/protocol/'.length);
      expect(fs.existsSync(path.join(protocolSrc, folder, 'index.ts')), entry).toBe(true);
    }
    expect(tsconfig).toContain('"@gridsync/protocol/*": ["./packages/protocol/src/*/index.ts"]');
    expect(tsconfig).toContain('"@gridsync/emulator": ["./packages/emulator/src/index.ts"]');
    expect(fs.existsSync(path.join(emulatorSrc, 'index.ts'))).toBe(true);
  });
});
