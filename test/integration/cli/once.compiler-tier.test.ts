// `once` runs on V8's baseline compiler only (issue #27: a cold run's CPU per item). Checked in a
// real node process of the built code, asking V8 itself (natives syntax) how a hot function was
// compiled.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cliPath } from '../../helpers/daemon-child.js';

const tierModule = pathToFileURL(path.join(path.dirname(cliPath), 'compiler-tier.js')).href;

/** Runs `body` as an ES module in a node with natives syntax; returns its stdout lines. */
function probe(body: string, extraFlags: string[] = []): string[] {
  const r = spawnSync(process.execPath, ['--allow-natives-syntax', ...extraFlags, '--input-type=module', '-e', body], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout.trim().split('\n');
}

// V8's optimization status bits: 16 = optimized by TurboFan.
const hotLoop = `
  const probeFn = () => new Function('x', 'return x * 3 + (x >> 1);');
  const spin = (f) => { for (let k = 0; k < 20 && (%GetOptimizationStatus(f) & 16) === 0; k++) for (let i = 0; i < 2e5; i++) f(i); };
  const turbofanned = (f) => (%GetOptimizationStatus(f) & 16) !== 0;
`;

describe('once: baseline compiler only', () => {
  it('a hot function is never optimized by TurboFan; without the call, it is', () => {
    const run = (call: string) =>
      probe(`
      import { baselineCompilerOnly } from '${tierModule}';
      ${hotLoop}
      ${call}
      const f = probeFn();
      spin(f);
      console.log('optimized', turbofanned(f));
    `);
    expect(run('baselineCompilerOnly();')).toEqual(['optimized false']);
    expect(run('')).toEqual(['optimized true']);
  });

  it('leaves the tiers alone when the operator chose them with a node flag', () => {
    const out = probe(
      `
      import { baselineCompilerOnly } from '${tierModule}';
      ${hotLoop}
      baselineCompilerOnly();
      const f = probeFn();
      spin(f);
      console.log('optimized', turbofanned(f));
    `,
      ['--max-opt=3'],
    );
    expect(out).toEqual(['optimized true']);
  });
});
