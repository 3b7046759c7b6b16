// The command-line summary an operator reads (docs/running.md, "Command line") against the built
// CLI's own `--help`: every command `gridsync --help` lists has a line there, every option a
// command's usage names is in its lines, every option the page gives a command is one the command
// takes, and the options every command takes are named below the block. The page once lacked
// `redeliver`, `--log-level`, `--quiet` and `call --soap`, and offered `call --api-key KEY`, which
// every user sees in ps, where the command says --api-key-file. And every command line any page,
// unit or the Dockerfile gives (`gridsync requeue --force NAME -c FILE`) names a command and only
// options that command takes.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/daemon-child.js';
import { repoRoot } from '../../helpers/journal-child.js';

const page = fs.readFileSync(path.join(repoRoot, 'docs/running.md'), 'utf8');
const section = /## Command line\n([\s\S]*?)\n## /.exec(page)?.[1] ?? '';
const block = /```\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
const belowBlock = section.slice(section.indexOf(block) + block.length);

/** The block's lines per command: a `gridsync <command>` line and the indented lines under it. */
function docEntries(): Map<string, string> {
  const entries = new Map<string, string>();
  let current: string | undefined;
  for (const line of block.split('\n')) {
    const command = /^gridsync ([a-z]+)/.exec(line)?.[1];
    if (command) current = command;
    if (current) entries.set(current, `${entries.get(current) ?? ''}\n${line}`);
  }
  return entries;
}

/** `--dry-run`, `--root-key-file`, `-c`: the options a text names. */
const optionsIn = (text: string): string[] => [
  ...new Set([...text.matchAll(/(?<![\w-])(--[a-z][a-z-]*|-[a-zA-Z])\b/g)].map((m) => m[1] as string)),
];

function help(args: string[]): string {
  const r = runCli([...args, '--help']);
  expect(r.status, r.stderr).toBe(0);
  return r.stdout;
}

/** The usage lines of a command's help: `usage: gridsync call …` and the `gridsync call …` lines under it. */
const usageLines = (text: string): string => (/^usage: [^\n]*(?:\n +gridsync [^\n]*)*/.exec(text)?.[0] ?? '').replace(/^usage: /, '');

const commands = [...help([]).matchAll(/^ {2}([a-z]+) {2,}/gm)].map((m) => m[1] as string);
const helps = new Map(commands.map((c) => [c, help([c])]));
/** Options whose help every command prints (the output options): the page names them once, below the block. */
const common = optionsIn(helps.get('run') ?? '').filter((o) => [...helps.values()].every((h) => optionsIn(h).includes(o)));

describe('docs/running.md "Command line" matches the CLI', () => {
  const entries = docEntries();

  it('finds the block, the commands and the options every command takes', () => {
    expect(commands.length).toBeGreaterThan(8);
    expect(entries.size).toBeGreaterThan(5);
    expect(common).toEqual(expect.arrayContaining(['--log-level', '--quiet']));
  });

  it('lists every command the CLI has, and no other', () => {
    expect([...entries.keys()].sort()).toEqual([...commands].sort());
  });

  it.each(commands)('gridsync %s: the options its usage names are on the page, and the page names no other', (command) => {
    const text = helps.get(command) ?? '';
    const doc = entries.get(command) ?? '';
    const usage = optionsIn(usageLines(text)).filter((o) => !common.includes(o));
    expect(usage.filter((o) => !optionsIn(doc).includes(o))).toEqual([]);
    expect(optionsIn(doc).filter((o) => !optionsIn(text).includes(o))).toEqual([]);
  });

  it('names below the block the options every command takes, with --help and --version', () => {
    for (const option of [...common, '--help', '--version']) expect(belowBlock).toContain(`\`${option}`);
  });
});

/** The pages, units and image an operator reads commands from. */
const OPERATOR_FILES = [
  'README.md',
  'Dockerfile',
  ...fs.readdirSync(path.join(repoRoot, 'docs')).map((f) => `docs/${f}`),
  ...fs.readdirSync(path.join(repoRoot, 'systemd')).map((f) => `systemd/${f}`),
];

/**
 * `gridsync once --dry-run -c FILE` as written: code spans, and lines of code blocks, that start with
 * a command; in the units and the Dockerfile every line; `node dist/cli/main.js run` read as `gridsync run`.
 */
function commandLines(file: string): string[] {
  const text = fs.readFileSync(path.join(repoRoot, file), 'utf8');
  const blocks = /^```\w*\n([\s\S]*?)^```/gm;
  // A span may wrap onto the next line of the page.
  const spans = (md: string): string[] =>
    [...md.replace(blocks, '').matchAll(/`([^`]+)`/g)].map((m) => (m[1] as string).replace(/\s*\n\s*/g, ' '));
  const lines = file.endsWith('.md')
    ? [...spans(text), ...[...text.matchAll(blocks)].flatMap((m) => (m[1] as string).split('\n'))]
    : text.split('\n');
  return lines
    .map((l) => /^\s*(gridsync\s+[a-z][^#|;&]*)/.exec(l.replace(/^.*?\bdist\/cli\/main\.js\s/, 'gridsync '))?.[1]?.trim())
    .filter((l): l is string => l !== undefined);
}

describe('every command line the operator pages, the units and the Dockerfile give is one the CLI takes', () => {
  const lines = OPERATOR_FILES.flatMap((file) => commandLines(file).map((line) => ({ file, line })));

  it('finds them (the units run main.js: read as gridsync)', () => {
    expect(lines.length).toBeGreaterThan(40);
    expect(lines.some((l) => l.file === 'systemd/gridsync.service' && l.line.startsWith('gridsync run -c'))).toBe(true);
    expect(lines.some((l) => l.file === 'README.md' && l.line.startsWith('gridsync requeue -c config/gridsync.yaml --force'))).toBe(true);
  });

  it.each(lines)('$file: $line', ({ line }) => {
    const command = /^gridsync\s+([a-z-]+)/.exec(line)?.[1] ?? '';
    expect(commands, `gridsync ${command} is not a command`).toContain(command);
    const text = helps.get(command) ?? '';
    const offered = optionsIn(line.replace(/^gridsync\s+[a-z-]+/, '')).filter((o) => !['--help', '--version', '-h', '-V'].includes(o));
    expect(offered.filter((o) => !optionsIn(text).includes(o))).toEqual([]);
  });
});

describe('the counts the pages give of what `gridsync call --list` lists', () => {
  const count = (args: string[]): number =>
    runCli(['call', ...args])
      .stdout.trim()
      .split('\n').length;
  const page = (file: string): string => fs.readFileSync(path.join(repoRoot, file), 'utf8');

  it('REST endpoints (client.md, catalog.md)', () => {
    const n = count(['--list']);
    expect(page('docs/client.md')).toContain(`all ${n} endpoints`);
    expect(page('docs/catalog.md')).toContain(`(flat, ${n})`);
  });

  it('SOAP operations (soap.md): it said 65 where the CLI lists 66', () => {
    const n = count(['--soap', '--list']);
    expect(page('docs/soap.md')).toContain(`lists the ${n} operations`);
    expect(page('docs/soap.md')).toContain(`has ${n} of the service's`);
  });
});
