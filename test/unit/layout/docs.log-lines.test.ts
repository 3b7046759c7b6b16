// The log lines the operations guide quotes (troubleshooting, logs) are lines gridsync writes, and
// the messages it quotes for an exit (`exits 2: \`…\``) are messages gridsync prints: each quoted
// fragment (split at "…" and at the example values: numbers, `N`, `<key>`) is found in the source.
// A reworded message fails here until the guide follows it.
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
const code = ['src', 'packages/protocol/src', 'packages/emulator/src'].flatMap((dir) => sources(path.join(root, dir))).join('\n');

/** `log \`X\``, `\`X\` in the log`, `\`X\` / \`Y\` in the log`: the quoted lines. */
function quotedLogLines(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/\blog `([^`]+)`/g)) out.push(m[1] as string);
  for (const m of text.matchAll(/((?:`[^`]+`(?: \/ )?)+) in the log/g))
    for (const q of (m[1] as string).matchAll(/`([^`]+)`/g)) out.push(q[1] as string);
  return out;
}

/** `exits 2: \`X\``, `exits 2: \`X\` / \`Y\``: the messages quoted for an exit. */
function quotedExitMessages(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/\bexits \d: ((?:`[^`]+`(?: \/ )?)+)/g))
    for (const q of (m[1] as string).matchAll(/`([^`]+)`/g)) out.push(q[1] as string);
  return out;
}

/**
 * The literal parts of a quote: without "…", example numbers and addresses, `N` and `<placeholders>`,
 * and split at parentheses (the source builds an optional `(pid N)` apart from the sentence).
 */
const fragments = (line: string): string[] =>
  line
    .split(/…|<[^>]+>|\bN\b|\b\d[\d.]*\b|[()]/)
    .map((f) => f.trim().replace(/:$/, '').trim())
    .filter(Boolean);

describe('docs quote real log lines', () => {
  const quoted = quotedLogLines(guide);
  it('finds the quotes', () => expect(quoted.length).toBeGreaterThan(3));
  it.each(quoted)('%s', (line) => {
    for (const fragment of fragments(line)) expect(code, fragment).toContain(fragment);
  });
});

describe('docs quote real exit messages', () => {
  const quoted = quotedExitMessages(guide);
  it('finds the quotes, and splits them at the example values', () => {
    expect(quoted.length).toBeGreaterThan(5);
    expect(fragments('http.port 9464 on 127.0.0.1 is already in use')).toEqual(['http.port', 'on', 'is already in use']);
    expect(fragments('config … is invalid: <key>: …')).toEqual(['config', 'is invalid']);
  });
  it.each(quoted)('%s', (line) => {
    for (const fragment of fragments(line)) expect(code, fragment).toContain(fragment);
  });
});
