/**
 * A lease holder frozen as it was about to move a refused file into errorDir (pause point
 * `out.error-folder-checked`, after `erroring` was journalled), woken after the other instance took
 * the mailbox over and put the file and its report there itself. The move starts no side effect
 * under a lapsed lease: the woken holder wrote a second report, under a variant name, for a file
 * that is not there (with a requeue command naming it), and went on retrying it with a warning.
 * Two `gridsync run` children of the built CLI, the emulator, one real PostgreSQL.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventually } from '../../helpers/daemon-child.js';
import { isStopped, startHaWorld, type HaInstance } from '../../helpers/ha-world.js';
import { postgresForFile } from '../../helpers/postgres.js';

const server = postgresForFile('a holder woken after its refused file was moved by another is not tested');

const takes = (i: HaInstance): number => i.lines().filter((l) => l.msg === 'mailbox lease taken').length;

describe.skipIf(!server.available)('a stale move into errorDir after a takeover', () => {
  it('the woken holder writes no second report; errorDir holds the file and its one report', async () => {
    const url = await server.createDatabase('stale_error_move');
    const w = await startHaWorld({ journalUrl: url, instances: 2, leaseMs: 3_000, renewMs: 750 });
    try {
      const [a, b] = w.instances as [HaInstance, HaInstance];
      a.start({ GRIDSYNC_PAUSE_AT: 'out.error-folder-checked:1' });
      await eventually(() => takes(a) === 1, 20_000, 'a holds the mailbox');
      b.start();
      await eventually(() => b.lines().some((l) => l.msg === 'gridsync started'), 20_000, 'b runs');
      const tmp = path.join(w.dir, '.bad.x12');
      fs.writeFileSync(tmp, 'not an interchange at all\n');
      fs.renameSync(tmp, path.join(w.outbox, 'bad.x12'));
      await eventually(() => isStopped(a.proc?.pid), 20_000, 'a frozen before its move into errorDir');
      const errorDir = (): string[] => fs.readdirSync(w.error).sort();
      await eventually(() => takes(b) > 0 && errorDir().length === 2, 30_000, 'b moved the file and its report');
      a.signal('SIGCONT');
      // a takes the mailbox back (the fair share) and runs; give its late steps time to show.
      await eventually(() => takes(a) > 1, 30_000, 'a holds the mailbox again');
      await new Promise((r) => setTimeout(r, 2_000));
      expect(errorDir()).toEqual(['bad.x12', 'bad.x12.error.json']);
      expect(a.lines().filter((l) => l.msg === 'cannot move the file to the error folder yet; will retry')).toEqual([]);
    } finally {
      await w.close();
    }
  }, 90_000);
});
