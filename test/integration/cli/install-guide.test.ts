// The install guide (docs/operations.md, step 4) installs a real `gridsync` command: this test runs
// the guide's own code block — parsed from the page, so it cannot drift — with the system paths
// moved into a temporary folder, skipping only the lines that need the network or root (named
// below). Then the command answers, runs a cycle, the units' Documentation= pages exist where the
// install put them, every `gridsync <command>` the guide uses is a command, and the log reader
// the guide pipes journalctl into runs from the installed copy (it was `npx pino-pretty`).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeDaemonWorld, type DaemonWorld } from '../../helpers/daemon-config.js';
import { repoRoot } from '../../helpers/journal-child.js';

const guide = fs.readFileSync(path.join(repoRoot, 'docs/operations.md'), 'utf8');
const sandbox = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-install-'));
const worlds: DaemonWorld[] = [];
afterAll(() => {
  fs.rmSync(sandbox, { recursive: true, force: true });
  worlds.forEach((w) => w.cleanup());
});

/** Lines of the guide not run here, and why. Each must still be in the block (checked). */
const NOT_RUN: readonly { line: RegExp; why: string }[] = [
  { line: /^apt-get install /, why: 'the network and root' },
  { line: /^git clone /, why: 'the network; the test runs on this checkout' },
  { line: /^npm ci && npm run build && npm prune --omit=dev$/, why: 'the network; the test suite built dist already' },
];

/** The guide's system paths, moved into the sandbox (longest first: /opt/gridsync-src before /opt/gridsync). */
const MOVED: readonly [string, string][] = [
  ['/opt/gridsync-src', repoRoot],
  ['/opt/gridsync', path.join(sandbox, 'opt/gridsync')],
  ['/usr/local/bin', path.join(sandbox, 'bin')],
  ['/usr/bin/node', process.execPath],
];
const move = (text: string): string => MOVED.reduce((t, [from, to]) => t.split(from).join(to), text);

/** The first sh block after a heading. */
function block(heading: string): string {
  const at = guide.indexOf(heading);
  expect(at, `heading ${heading} in docs/operations.md`).toBeGreaterThanOrEqual(0);
  const m = /```sh\n([\s\S]*?)```/.exec(guide.slice(at));
  if (!m) throw new Error(`no sh block after ${heading}`);
  return m[1] as string;
}

describe('the install guide', () => {
  const program = block('### 4. The program');
  const lines = program.split('\n').filter((l) => l.trim() !== '');
  const runnable = lines.filter((l) => !NOT_RUN.some((n) => n.line.test(l)));
  const bin = path.join(sandbox, 'bin');

  it('step 4 runs as written and installs a gridsync command', () => {
    for (const n of NOT_RUN)
      expect(
        lines.some((l) => n.line.test(l)),
        `still in the guide: ${n.line} (${n.why})`,
      ).toBe(true);
    fs.mkdirSync(bin, { recursive: true });
    const r = spawnSync('sh', ['-e', '-c', move(runnable.join('\n'))], {
      encoding: 'utf8',
      env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}` },
      timeout: 120_000,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^gridsync \d+\.\d+\.\d+/m);
    expect(fs.statSync(path.join(bin, 'gridsync')).mode & 0o111).not.toBe(0);
    // The package's bin entry is executable on its own too (npm run build sets the mode).
    expect(fs.statSync(path.join(sandbox, 'opt/gridsync/dist/cli/main.js')).mode & 0o111).not.toBe(0);
  });

  it('the installed command runs a cycle (its node_modules work from the copy)', () => {
    const w = makeDaemonWorld();
    worlds.push(w);
    const r = spawnSync(path.join(bin, 'gridsync'), ['once', '-c', w.configFile], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr + r.stdout).toBe(0);
  });

  it('the log reader the guide pipes journalctl into is in the installed copy and reads a log line', () => {
    const readers = [...guide.matchAll(/journalctl -u gridsync -o cat \|\s*([^\s`]+)/g)].map((m) => m[1] as string);
    expect(readers.length).toBeGreaterThan(0);
    for (const reader of new Set(readers)) {
      // Not `npx`: outside the checkout it would fetch the package from the registry, at 3 a.m. on a host without one.
      expect(reader).toMatch(/^\/opt\/gridsync\//);
      const r = spawnSync(move(reader), [], {
        input: '{"level":30,"time":0,"msg":"parcel received"}\n',
        encoding: 'utf8',
        timeout: 30_000,
      });
      expect(String(r.stdout), String(r.error ?? r.stderr)).toMatch(/INFO.*parcel received/);
    }
  });

  it("the units' Documentation= pages are installed where the units say", () => {
    for (const unit of ['gridsync.service', 'gridsync@.service']) {
      const text = fs.readFileSync(path.join(repoRoot, 'systemd', unit), 'utf8');
      const docs = [...text.matchAll(/^Documentation=(.*)$/gm)].flatMap((m) => (m[1] as string).split(/\s+/));
      expect(docs.length).toBeGreaterThan(0);
      for (const d of docs) expect(fs.existsSync(move(d.replace(/^file:\/\//, ''))), `${unit}: ${d}`).toBe(true);
      // The unit's own pointer to the install guide names a page of the repo.
      for (const m of text.matchAll(/Install: (docs\/\S+\.md)/g)) expect(fs.existsSync(path.join(repoRoot, m[1] as string))).toBe(true);
    }
  });

  it('every `gridsync <command>` the guide uses is a command of the installed gridsync', () => {
    const help = spawnSync(path.join(bin, 'gridsync'), ['--help'], { encoding: 'utf8' }).stdout;
    const commands = new Set([...help.matchAll(/^ {2}(\w+) {2,}/gm)].map((m) => m[1]));
    expect(commands.size).toBeGreaterThan(3);
    // In the guide's code (blocks and `spans`), a command line starts with gridsync or its path.
    const code = [...guide.matchAll(/```sh\n([\s\S]*?)```|`([^`\n]+)`/g)].map((m) => m[1] ?? m[2] ?? '').join('\n');
    const used = new Set([...code.matchAll(/(?:^\s*|&&\s*|;\s*|\s-- |\/bin\/)gridsync ([a-z]+)\b/gm)].map((m) => m[1] as string));
    expect(used.size).toBeGreaterThan(3);
    expect([...used].filter((c) => !commands.has(c))).toEqual([]);
  });
});
