// `npm test` must not leave data in /tmp: every temporary file of the run, including those of the
// processes tests start (and SIGKILL), lands in one folder that the run removes at its end.
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

describe('temporary files of a test run', () => {
  it('go to the run folder, for this worker and for child processes alike', () => {
    expect(path.basename(os.tmpdir())).toMatch(/^gridsync-test-run-/);
    const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(require("os").tmpdir())'], { encoding: 'utf8' });
    expect(child.stdout).toBe(os.tmpdir());
  });
});
