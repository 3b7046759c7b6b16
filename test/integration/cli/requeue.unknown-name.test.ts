// `gridsync requeue NAME` with a NAME no errorDir holds: the operator's mistake, so exit 2 as for
// every other usage mistake (docs/errors.md), not 1, which says a later run can finish the work.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { makeDaemonWorld } from '../../helpers/daemon-config.js';
import { runCli } from '../../helpers/daemon-child.js';

describe('requeue of a name in no errorDir', () => {
  it('exits 2 and names it; the files that are there are requeued all the same', () => {
    const w = makeDaemonWorld();
    onTestFinished(() => w.cleanup());
    fs.mkdirSync(w.error, { recursive: true });
    fs.writeFileSync(path.join(w.error, 'bad.x12'), 'ISA*fixed~');

    const alone = runCli(['requeue', '-c', w.configFile, 'nope.x12']);
    expect(alone.status).toBe(2);
    expect(alone.stderr).toContain('not found in any errorDir: nope.x12');

    const both = runCli(['requeue', '-c', w.configFile, 'bad.x12', 'nope.x12']);
    expect(both.status).toBe(2);
    expect(both.stderr).toContain('not found in any errorDir: nope.x12');
    expect(fs.existsSync(path.join(w.outbox, 'bad.x12'))).toBe(true);
    expect(fs.existsSync(path.join(w.error, 'bad.x12'))).toBe(false);
  });
});
