// One install recipe: only the install guide (docs/operations.md) creates users and groups (two
// recipes once disagreed — useradd here, adduser there, group erp against edi), and every group
// the docs and config examples give files or folders names a group that guide creates.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../../..');
const read = (file: string): string => fs.readFileSync(path.join(root, file), 'utf8');
const GUIDE = 'docs/operations.md';
const pages = [
  'README.md',
  'examples/README.md',
  ...fs
    .readdirSync(path.join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const configs = fs
  .readdirSync(path.join(root, 'config'))
  .filter((f) => f.endsWith('.yaml'))
  .map((f) => `config/${f}`);

const ACCOUNT_COMMANDS = /\b(?:useradd|groupadd|adduser|addgroup|usermod|groupmod)\b/g;
/** The commands a page gives: its fenced code blocks. */
const codeBlocks = (text: string): string => [...text.matchAll(/```[^\n]*\n([\s\S]*?)```/g)].map((m) => m[1]).join('\n');

/** The groups a recipe creates: `addgroup [--system] G`, and the user's own group of `adduser … --group … U`. */
function createdGroups(text: string): string[] {
  const groups = [...text.matchAll(/^\s*(?:addgroup|groupadd)\b.*?(\S+)\s*$/gm)].map((m) => m[1] as string);
  for (const m of text.matchAll(/^\s*adduser\b(?=.*--group\b).*?(\S+)\s*$/gm)) groups.push(m[1] as string);
  return groups;
}

/** Groups given to gridsync's files and folders: `group: G` in a config, `-g G` in a command. */
function namedGroups(text: string): string[] {
  return [
    // As a config key: at the start of a (commented) line, or inside a flow mapping.
    ...[...text.matchAll(/(?:^[ \t]*(?:#[ \t]*)?|[{,][ \t]*)group: ([A-Za-z_][\w-]*)/gm)].map((m) => m[1] as string),
    ...[...text.matchAll(/(?:^|\s)-g ([A-Za-z_][\w-]*)/gm)].map((m) => m[1] as string),
  ];
}

describe('one install recipe', () => {
  const created = [...createdGroups(read(GUIDE)), 'root'];

  it('reads the groups the guide creates', () => {
    expect(created).toEqual(expect.arrayContaining(['gridsync', 'edi']));
    expect(codeBlocks('text\n```sh\nsudo useradd --system gridsync\n```\n').match(ACCOUNT_COMMANDS)).toEqual(['useradd']);
    expect(namedGroups('inbox: { dir: /srv/edi/inbox, group: erp }\ninstall -d -o gridsync -g edi -m 2770 x')).toEqual(['erp', 'edi']);
  });

  it.each(pages.filter((p) => p !== GUIDE))('%s creates no users or groups of its own', (page) => {
    expect(codeBlocks(read(page)).match(ACCOUNT_COMMANDS) ?? []).toEqual([]);
  });

  // A minimal Debian has no sudo (runuser and su are there), and the first exchange in production
  // must not send the emulator's demo samples to a real partner.
  it('the guide runs on a minimal system and sends no demo sample', () => {
    const commands = codeBlocks(read(GUIDE));
    expect(commands.match(/\bsudo\b/g) ?? []).toEqual([]);
    expect(commands.match(/\bexamples\/\S+/g) ?? []).toEqual([]);
  });

  it.each([...pages, ...configs])('%s names only groups the install guide creates', (file) => {
    expect(namedGroups(read(file)).filter((g) => !created.includes(g))).toEqual([]);
  });
});
