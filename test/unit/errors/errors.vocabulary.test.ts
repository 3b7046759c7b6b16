/**
 * The error vocabulary holds for the whole source tree: every error class gridsync defines extends
 * GridsyncError, its code is namespaced and unique, and docs/errors.md explains it. Read from the
 * source so that a new error class cannot be added without its table row.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GridApiError, GridTransportError } from '../../../src/api/errors.js';
import { describeForOperator, exitCodeFor } from '../../../src/cli/exit-codes.js';
import { StartupError } from '../../../src/daemon/index.js';
import { errorFields } from '../../../src/errors/index.js';

const root = path.resolve(import.meta.dirname, '../../..');

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
const docs = fs.readFileSync(path.join(root, 'docs/errors.md'), 'utf8');

describe('error vocabulary', () => {
  it('no error class extends Error directly (only the base does)', () => {
    const offenders = sources.flatMap(({ file, text }) =>
      [...text.matchAll(/class (\w+) extends Error\b/g)]
        .map((m) => `${file}: ${m[1]}`)
        .filter((s) => !s.startsWith('packages/protocol/src/errors/')),
    );
    expect(offenders).toEqual([]);
  });

  it('every literal code is namespaced and in docs/errors.md', () => {
    const codes = sources.flatMap(({ file, text }) =>
      [...text.matchAll(/readonly code = '([^']+)'/g)].map((m) => ({ file, code: m[1] as string })),
    );
    expect(codes.length).toBeGreaterThan(10);
    for (const { file, code } of codes) {
      expect(code, file).toMatch(/^[A-Z]+_[A-Z0-9_]+$/);
      expect(docs, `${code} (${file}) has no row in docs/errors.md`).toContain(`\`${code}\``);
    }
  });

  it('every StartupCode is in docs/errors.md', () => {
    const daemon = sources.find((s) => s.file === path.join('src', 'daemon', 'startup-error.ts'))?.text ?? '';
    const union = /export type StartupCode =([^;]+);/.exec(daemon)?.[1] ?? '';
    const codes = [...union.matchAll(/'([A-Z_]+)'/g)].map((m) => m[1] as string);
    expect(codes.length).toBeGreaterThan(3);
    for (const code of codes) expect(docs).toContain(`\`${code}\``);
  });
});

describe('errorFields', () => {
  it('carries the code and the context fields an operator searches by', () => {
    const fields = errorFields(new GridApiError('parcels.download', 503, 'ServiceUnavailable', 'busy', 2000));
    expect(fields).toMatchObject({
      code: 'GRID_API_ERROR',
      endpoint: 'parcels.download',
      httpStatus: 503,
      errorCode: 'ServiceUnavailable',
      retryAfterMs: 2000,
    });
    expect(fields.err).toContain('HTTP 503');
    expect(Object.keys(fields)).not.toContain('stack');
  });

  it('keeps the system code and path of a Node error', () => {
    let err: unknown;
    try {
      fs.readFileSync('/nonexistent/gridsync-errors-test');
    } catch (e) {
      err = e;
    }
    expect(errorFields(err)).toMatchObject({ code: 'ENOENT', syscall: 'open', path: '/nonexistent/gridsync-errors-test' });
  });

  it('turns a non-Error into the err field', () => {
    expect(errorFields('boom')).toEqual({ err: 'boom' });
  });
});

describe('exit codes come from codes, not message text', () => {
  it('unreachable and stopped are worth a later run; the rest needs the operator', () => {
    expect(exitCodeFor(new StartupError('STARTUP_UNREACHABLE', 'anything at all'))).toBe(1);
    expect(exitCodeFor(new StartupError('STARTUP_STOPPED', 'not reachable'))).toBe(1);
    // The old rule matched /not reachable/ in the message: a reworded message must not change the exit.
    expect(exitCodeFor(new StartupError('STARTUP_CREDENTIALS_REJECTED', 'the service is not reachable'))).toBe(2);
    // An error without a code of ours is a bug, not "fix your config".
    expect(exitCodeFor(new Error('not reachable'))).toBe(3);
    expect(exitCodeFor(new TypeError('x is undefined'))).toBe(3);
  });

  it('describes an error in one line with its code and no stack', () => {
    const line = describeForOperator(new GridTransportError('parcels.list', 'ECONNRESET', 'socket hang up', false));
    expect(line).toBe('parcels.list: ECONNRESET: socket hang up [GRID_TRANSPORT_ERROR]');
    expect(line).not.toContain('\n');
  });
});
