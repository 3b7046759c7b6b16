/**
 * One error table (src/errors/table.ts): every code the source raises has a row, docs/errors.md
 * shows exactly that table, the CLI's exit codes come from it, and no operator path throws an error
 * without a code. Run with GRIDSYNC_UPDATE_DOCS=1 to rewrite the table in docs/errors.md.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_TABLE, errorRow, renderErrorTable } from '../../../src/errors/index.js';

const root = path.resolve(import.meta.dirname, '../../..');
const DOC = path.join(root, 'docs/errors.md');
const BEGIN = '<!-- error table: generated from src/errors/table.ts -->';
const END = '<!-- end of error table -->';

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}
// The daemon and both packages: an error the protocol or the emulator raises reaches an operator too.
const sources = ['src', 'packages/protocol/src', 'packages/emulator/src']
  .flatMap((dir) => sourceFiles(path.join(root, dir)))
  .map((file) => ({
    file: path.relative(root, file),
    text: fs.readFileSync(file, 'utf8'),
  }));

describe('the error table', () => {
  it('has a row for every code the source raises (class codes and StartupCode)', () => {
    const literal = sources.flatMap(({ file, text }) => [...text.matchAll(/readonly code = '([^']+)'/g)].map((m) => `${m[1]} (${file})`));
    const startup = sources.flatMap(({ text }) =>
      [...(/export type StartupCode =([^;]+);/.exec(text)?.[1] ?? '').matchAll(/'([A-Z_]+)'/g)].map((m) => `${m[1]} (StartupCode)`),
    );
    expect(literal.length + startup.length).toBeGreaterThan(20);
    const missing = [...literal, ...startup].filter((c) => !errorRow(c.split(' ')[0] as string));
    expect(missing).toEqual([]);
  });

  it('docs/errors.md shows exactly this table', () => {
    const doc = fs.readFileSync(DOC, 'utf8');
    const generated = `${BEGIN}\n${renderErrorTable()}\n${END}`;
    const current = new RegExp(`${BEGIN}[\\s\\S]*?${END}`).exec(doc)?.[0];
    if (process.env.GRIDSYNC_UPDATE_DOCS === '1' && current !== undefined) fs.writeFileSync(DOC, doc.replace(current, generated));
    else expect(current, 'run this test with GRIDSYNC_UPDATE_DOCS=1 to regenerate the table').toBe(generated);
  });

  it('every row says what to do and an exit code that means what the docs say', () => {
    for (const [code, row] of Object.entries(ERROR_TABLE)) {
      expect(row.action, code).not.toBe('');
      if (row.retryable) expect(row.exit, `${code}: retryable, so a later run can finish`).toBe(1);
    }
  });

  it('no code-less `throw new Error` in src/', () => {
    const offenders = sources.flatMap(({ file, text }) => (/throw new (Type|Range)?Error\(/.test(text) ? [file] : []));
    expect(offenders).toEqual([]);
  });
});
