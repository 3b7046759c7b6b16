/**
 * Every test that can skip for want of a tool, data or privilege goes through one helper
 * (test/helpers/require-tool.ts), so each skip prints the same NOTICE and GRIDSYNC_REQUIRE_TOOLS=1
 * turns every one of them into a failure: a test file that skips on its own would escape both.
 * (`postgresForFile` and `postgresAvailable` of test/helpers/postgres.ts decide through that helper too.)
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const testDir = path.resolve(import.meta.dirname, '../..');

function files(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? files(p) : /\.test\.ts$/.test(e.name) ? [p] : [];
  });
}

describe('tool and data skips', () => {
  const tests = files(testDir).map((f) => ({ file: path.relative(testDir, f), text: fs.readFileSync(f, 'utf8') }));

  it('a test file that skips decides it through the require-tool helper', () => {
    const own = tests.filter(
      ({ text }) =>
        /\.skipIf\(|\.runIf\(|\bt\.skip\(|\.skip\(/.test(text) &&
        !text.includes('helpers/require-tool.js') &&
        !text.includes('postgresForFile(') &&
        !text.includes('postgresAvailable('),
    );
    expect(own.map((t) => t.file)).toEqual([]);
  });

  it('no test prints its own skip notice', () => {
    const own = tests.filter(({ file, text }) => !file.endsWith('tool-skips.test.ts') && /NOTICE|\[notice\] skipped|SKIPPED/.test(text));
    expect(own.map((t) => t.file)).toEqual([]);
  });
});
