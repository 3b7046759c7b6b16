// Issue 24, weak item: a claimed file that cannot be snapshotted for lack of space sat in
// processing/ — out of the outbox, not in errorDir — with only a warning "claim interrupted": the
// ERP saw its file vanish and nothing anywhere said why. Now: one error line with fields, and a
// deferred count with the reason (the events behind gridsync_deferred_total and status); once
// space is freed the file is sent, once.
//
// The lack of space is real: the outbox and processing/ live on a 1 MiB tmpfs (mounting one needs
// root; skipped with a notice otherwise). Injecting ENOSPC into a file call would need a seam in the
// product only tests use; a small filesystem needs none.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULTS } from '../../../src/config/defaults.js';
import { EventBus, type PipelineEvents } from '../../../src/events/index.js';
import { OutboundPipeline } from '../../../src/outbound/index.js';
import { x12 } from '../../helpers/edi.js';
import { emulatorParcels, listFiles, makeWorld, type TestWorld } from '../../helpers/world.js';
import { recorder } from '../../helpers/log-recorder.js';
import { isRoot, prerequisite } from '../../helpers/require-tool.js';

const canMount = prerequisite('root', isRoot, 'mounting the small tmpfs needs root: running out of space for a snapshot is not checked');

let w: TestWorld;
let small: string;
beforeEach(async () => {
  w = await makeWorld();
  small = path.join(w.root, 'small');
  fs.mkdirSync(small);
});
afterEach(async () => {
  if (canMount) execFileSync('umount', ['-l', small]);
  await w.close();
});

describe('a claimed file that cannot be snapshotted for lack of space', () => {
  it.skipIf(!canMount)(
    'is reported loudly (an error line with fields, a deferred count with the reason) and sent once space is back',
    async () => {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m,mode=0755', 'tmpfs', small]);
      const dirs = { outbox: path.join(small, 'outbox'), processing: path.join(small, 'processing'), sent: path.join(small, 'sent') };
      for (const d of Object.values(dirs)) fs.mkdirSync(d);
      const logger = recorder();
      const events = new EventBus<PipelineEvents>();
      const deferred: (string | undefined)[] = [];
      events.on('outbound:deferred', (e) => deferred.push(e.reason));
      const p = new OutboundPipeline({
        client: w.client,
        journal: w.journal,
        mailbox: {
          mailboxId: 1001,
          name: 'mb1001',
          outbox: {
            ...DEFAULTS.outbox,
            ignore: [...DEFAULTS.outbox.ignore],
            dir: dirs.outbox,
            sentDir: dirs.sent,
            errorDir: w.dirs.error,
            processingDir: dirs.processing,
            stableMs: 50,
            rescanMs: 60_000,
            validateEnvelope: false,
          },
        },
        stateDir: w.dirs.state,
        logger,
        events,
      });
      await p.checkPrerequisites();
      // The file fits; its snapshot beside it does not while the filler takes the rest.
      const content = x12(5, `N1*ST*${'A'.repeat(400 * 1024)}`);
      fs.writeFileSync(path.join(dirs.outbox, 'big.x12'), content);
      const filler = path.join(small, 'filler');
      fs.writeFileSync(filler, Buffer.alloc(450 * 1024));

      await p.runCycle();
      expect(listFiles(dirs.outbox)).toEqual([]);
      expect(listFiles(w.dirs.error)).toEqual([]);
      const errors = logger.lines.filter((l) => l.level === 'error');
      expect(errors).toHaveLength(1);
      expect(errors[0]?.obj).toMatchObject({ file: 'big.x12', processingDir: dirs.processing });
      expect(JSON.stringify(errors[0]?.obj)).toContain('ENOSPC');
      expect(deferred.length).toBeGreaterThan(0);
      expect(deferred.every((r) => r !== undefined && r.includes(dirs.processing))).toBe(true);

      fs.rmSync(filler);
      await p.runCycle();
      expect(listFiles(dirs.sent)).toEqual(['big.x12']);
      const uploads = (await emulatorParcels(w.emu, 1001)).filter((x) => x.direction === 'out');
      expect(uploads.map((x) => x.fileName)).toEqual(['big.x12']);
    },
  );
});
