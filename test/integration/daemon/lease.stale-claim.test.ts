/**
 * A lease holder frozen right before its claim rename (after the lease check), woken after another
 * instance took the mailbox over and sent that file — and after the ERP exported a new file under
 * the same name (a daily file). The woken holder's rename is the late half of "two renames of the
 * same file, only one succeeds": the first file is gone, so it moves the new one into the processing
 * path of the old, finished row. Its journal write is refused by the fence, and nothing else points
 * at that path: the new file sat in the processing folder for good, never sent. Two `gridsync run`
 * children of the built CLI, the emulator, one real PostgreSQL; the freeze is the pause point
 * `out.before-claim-rename`.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventually } from '../../helpers/daemon-child.js';
import { x12 } from '../../helpers/edi.js';
import { isStopped, startHaWorld, type HaInstance } from '../../helpers/ha-world.js';
import { postgresForFile } from '../../helpers/postgres.js';

const server = postgresForFile('a holder woken after its claim was taken over is not tested');

const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');
const takes = (i: HaInstance): number => i.lines().filter((l) => l.msg === 'mailbox lease taken').length;

describe.skipIf(!server.available)('a stale claim rename after a takeover', () => {
  it('the new file of the same name it moved is sent all the same, nothing left in processing', async () => {
    const url = await server.createDatabase('stale_claim');
    const w = await startHaWorld({ journalUrl: url, instances: 2, leaseMs: 3_000, renewMs: 750 });
    try {
      const [a, b] = w.instances as [HaInstance, HaInstance];
      a.start({ GRIDSYNC_PAUSE_AT: 'out.before-claim-rename:1' });
      await eventually(() => takes(a) === 1, 20_000, 'a holds the mailbox');
      b.start();
      await eventually(() => b.lines().some((l) => l.msg === 'gridsync started'), 20_000, 'b runs');
      const put = (content: Buffer): void => {
        const tmp = path.join(w.dir, '.daily.x12');
        fs.writeFileSync(tmp, content);
        fs.renameSync(tmp, path.join(w.outbox, 'daily.x12'));
      };
      const first = Buffer.from(x12(1));
      const second = Buffer.from(x12(2));
      const inSent = (content: Buffer): boolean =>
        fs.readdirSync(w.sent).some((f) => sha(fs.readFileSync(path.join(w.sent, f))) === sha(content));
      put(first);
      await eventually(() => isStopped(a.proc?.pid), 20_000, 'a frozen before its claim rename');
      // b takes over after the lease, finishes the claim and sends the first file.
      await eventually(() => takes(b) > 0 && inSent(first), 30_000, 'the first file sent by b');
      put(second);
      a.signal('SIGCONT');
      const processing = path.join(path.dirname(w.outbox), '.gridsync-processing');
      const left = (): string[] => (fs.existsSync(processing) ? fs.readdirSync(processing) : []);
      await eventually(
        async () => inSent(second) && (await w.parcels()).some((p) => p.sha256 === sha(second)) && left().length === 0,
        30_000,
        'the second file sent',
      ).catch((err: unknown) => {
        throw new Error(`${String(err)}: processing holds [${left().join(', ')}], outbox [${fs.readdirSync(w.outbox).join(', ')}]`);
      });
      const sent = (await w.parcels()).filter(
        (p) => p.fileName === 'daily.x12' && (p.direction === 'out' || /^OutBox/.test(p.status ?? p.parcelStatus ?? '')),
      );
      expect(sent.map((p) => p.sha256).sort()).toEqual([sha(first), sha(second)].sort());
      expect(fs.readdirSync(w.outbox)).toEqual([]);
      expect(fs.readdirSync(w.error)).toEqual([]);
    } finally {
      await w.close();
    }
  }, 90_000);
});
