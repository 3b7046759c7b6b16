// The unit files point the operator at documentation that is there: every `Documentation=` file
// under /opt/gridsync is one the install guide copies there (a unit once named a README the install
// never copied), and every page and section a unit's comments name exists (one named a README
// section that did not). The install guide's copy line is read from the page, so both drift here.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../../..');
const guide = fs.readFileSync(path.join(root, 'docs/operations.md'), 'utf8');
const units = fs.readdirSync(path.join(root, 'systemd')).filter((f) => f.endsWith('.service'));
const INSTALL_DIR = '/opt/gridsync';

/** What the guide's `cp -r … /opt/gridsync/` copies into the install folder. */
function installedByGuide(text: string): string[] {
  const line = text.split('\n').find((l) => new RegExp(`\\bcp -r (.+) ${INSTALL_DIR}/?$`).test(l.trim()));
  const args = line ? (new RegExp(`\\bcp -r (.+) ${INSTALL_DIR}/?$`).exec(line.trim())?.[1] ?? '') : '';
  return args.split(/\s+/).filter(Boolean);
}

const headings = (text: string): string[] => [...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => (m[1] as string).replace(/`/g, ''));

/** Problems with what one unit names: Documentation= targets and the pages/sections of its comments. */
function unitProblems(unit: string, installed: string[]): string[] {
  const problems: string[] = [];
  for (const m of unit.matchAll(/^Documentation=(.+)$/gm)) {
    for (const url of (m[1] as string).split(/\s+/)) {
      const local = /^file:\/\/(\/.+)$/.exec(url)?.[1];
      if (!local?.startsWith(`${INSTALL_DIR}/`)) continue;
      const rel = local.slice(INSTALL_DIR.length + 1);
      if (!installed.some((c) => rel === c || rel.startsWith(`${c}/`))) problems.push(`${url}: the install guide does not copy ${rel}`);
      if (!fs.existsSync(path.join(root, rel))) problems.push(`${url}: no ${rel} in the repository`);
    }
  }
  const comments = unit
    .split('\n')
    .filter((l) => l.startsWith('#'))
    .join('\n');
  // `docs/operations.md, Part 1` / `README "Running as a service"`: the page, and the section when one is named.
  for (const m of comments.matchAll(/\b((?:docs\/[\w.-]+\.md)|README(?:\.md)?)(?:,? (Part \d+)| "([^"]+)")?/g)) {
    const page = (m[1] as string).startsWith('README') ? 'README.md' : (m[1] as string);
    if (!fs.existsSync(path.join(root, page))) {
      problems.push(`${m[0]}: no ${page}`);
      continue;
    }
    const section = m[2] ?? m[3];
    if (section && !headings(fs.readFileSync(path.join(root, page), 'utf8')).some((h) => h.startsWith(section)))
      problems.push(`${m[0]}: ${page} has no section "${section}"`);
  }
  return problems;
}

describe('what the systemd units point to exists', () => {
  const installed = installedByGuide(guide);
  it('reads what the install guide copies', () => expect(installed).toEqual(expect.arrayContaining(['dist', 'docs'])));
  it('the check notices a missing section and a page the install does not copy', () => {
    const old = '# Install: see README "Running as a systemd service".\n[Unit]\nDocumentation=file:///opt/gridsync/README.md\n';
    expect(unitProblems(old, ['dist', 'node_modules', 'package.json'])).toEqual([
      'file:///opt/gridsync/README.md: the install guide does not copy README.md',
      'README "Running as a systemd service": README.md has no section "Running as a systemd service"',
    ]);
  });
  it.each(units)('%s', (file) => {
    const unit = fs.readFileSync(path.join(root, 'systemd', file), 'utf8');
    expect(unit).toMatch(/^Documentation=/m);
    expect(unitProblems(unit, installed)).toEqual([]);
  });
});
