// The upgrade and uninstall steps (docs/upgrading.md) follow the install guide (docs/operations.md,
// Part 1) as it is: the upgrade copies the program exactly as the install does, and the uninstall
// removes every program file the install puts in place (the program, its source, the command, the
// unit). Both pages are read as written, so a change to the install fails here until they follow.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../../..');
const guide = fs.readFileSync(path.join(root, 'docs/operations.md'), 'utf8');
const upgrading = fs.readFileSync(path.join(root, 'docs/upgrading.md'), 'utf8');

const codeBlocks = (text: string): string => [...text.matchAll(/```[^\n]*\n([\s\S]*?)```/g)].map((m) => m[1]).join('\n');
const section = (text: string, heading: string): string => {
  const at = text.indexOf(`\n## ${heading}\n`);
  expect(at, `section ${heading}`).toBeGreaterThanOrEqual(0);
  const next = text.indexOf('\n## ', at + 1);
  return text.slice(at, next < 0 ? undefined : next);
};

/** The program's copy into its install folder: `cp -r … /opt/gridsync/`. */
const programCopy = (text: string): string | undefined => /cp -r [^\n`]+ \/opt\/gridsync\/?(?=[\s`]|$)/m.exec(text)?.[0];

/** What the install puts in place for the program: folders under /opt, commands in /usr/local/bin, unit files. */
function installedPaths(commands: string): string[] {
  const out = new Set<string>();
  for (const m of commands.matchAll(/\/opt\/[\w.-]+|\/usr\/local\/bin\/[\w.-]+/g)) out.add(m[0]);
  for (const m of commands.matchAll(/\bcp (\S+) (\/etc\/systemd\/system)\/?(?=\s|$)/gm))
    out.add(`${m[2]}/${path.basename(m[1] as string)}`);
  return [...out];
}

describe('upgrading and uninstalling follow the install guide', () => {
  it('the upgrade copies the program as the install does', () => {
    const install = programCopy(codeBlocks(guide));
    expect(install).toBeDefined();
    expect(programCopy(section(upgrading, 'Upgrade'))).toBe(install);
  });

  it('the uninstall removes every program file the install puts in place', () => {
    const installed = installedPaths(codeBlocks(guide));
    expect(installed).toEqual(
      expect.arrayContaining(['/opt/gridsync', '/opt/gridsync-src', '/usr/local/bin/gridsync', '/etc/systemd/system/gridsync.service']),
    );
    const removal = codeBlocks(section(upgrading, 'Uninstall'));
    const removed = new Set(removal.split(/\s+/));
    expect(installed.filter((p) => !removed.has(p))).toEqual([]);
  });
});
