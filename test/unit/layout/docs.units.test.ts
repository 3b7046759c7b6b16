// The unit files' comments point the operator at documentation that is there: every page and
// section they name exists (a unit once sent the operator to README "Running as a systemd service",
// a section that never existed). Their Documentation= pages are checked where the install guide
// installs them (test/integration/cli/install-guide.test.ts).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../../..');
const units = fs.readdirSync(path.join(root, 'systemd')).filter((f) => f.endsWith('.service'));

const headings = (text: string): string[] => [...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => (m[1] as string).replace(/`/g, ''));

/** The pages and sections a unit's comments name that do not exist: `docs/operations.md, Part 1`, `README "Section"`. */
function missingReferences(unit: string): string[] {
  const comments = unit
    .split('\n')
    .filter((l) => l.startsWith('#'))
    .join('\n');
  const problems: string[] = [];
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
  it('the check notices a missing section and a missing page', () => {
    expect(missingReferences('# Install: see README "Running as a systemd service"; docs/install.md.\n[Unit]\n')).toEqual([
      'README "Running as a systemd service": README.md has no section "Running as a systemd service"',
      'docs/install.md: no docs/install.md',
    ]);
    expect(missingReferences('# Install: docs/operations.md, Part 1\n')).toEqual([]);
  });
  it.each(units)('%s', (file) => {
    const unit = fs.readFileSync(path.join(root, 'systemd', file), 'utf8');
    expect(missingReferences(unit)).toEqual([]);
  });
});
