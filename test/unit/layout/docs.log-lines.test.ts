// The log lines the operations guide quotes (troubleshooting, logs) are lines gridsync writes: each
// quoted fragment (split at "…") is found in the source. A reworded message fails here until the
// guide follows it.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../../..');
const guide = fs.readFileSync(path.join(root, 'docs/operations.md'), 'utf8');

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sources(p) : e.name.endsWith('.ts') ? [fs.readFileSync(p, 'utf8')] : [];
  });
}
const code = sources(path.join(root, 'src')).join('\n');

/** `log \`X\``, `\`X\` in the log`, `\`X\` / \`Y\` in the log`: the quoted lines. */
function quotedLogLines(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/\blog `([^`]+)`/g)) out.push(m[1] as string);
  for (const m of text.matchAll(/((?:`[^`]+`(?: \/ )?)+) in the log/g))
    for (const q of (m[1] as string).matchAll(/`([^`]+)`/g)) out.push(q[1] as string);
  return out;
}

describe('docs quote real log lines', () => {
  const quoted = quotedLogLines(guide);
  it('finds the quotes', () => expect(quoted.length).toBeGreaterThan(3));
  it.each(quoted)('%s', (line) => {
    for (const fragment of line
      .split('…')
      .map((f) => f.trim().replace(/:$/, ''))
      .filter(Boolean))
      expect(code, fragment).toContain(fragment);
  });
});
