// A file whose drive meets the journal out of reach (its PostgreSQL server down: JOURNAL_UNAVAILABLE)
// waits in the journal and is queued again at every rescan. That is an expected, coded failure:
// told once when it starts and once when it ends — it was an error line, "outbound task failed
// unexpectedly", at every rescan. The journal here fails its reads of one row, as the PostgreSQL
// journal does while its server is down; the rescans' reads of the unfinished rows get through, so
// the drives alone fail.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { eventually } from '../../helpers/daemon-child.js';
import { x12 } from '../../helpers/edi.js';
import { journalReadsDown } from '../../helpers/journal-reads-down.js';
import { recorder } from '../../helpers/log-recorder.js';
import { listFiles, makeWorld, outboundPipeline, type TestWorld } from '../../helpers/world.js';

let w: TestWorld;

describe('an outbound file whose drive meets the journal out of reach', () => {
  beforeEach(async () => {
    w = await makeWorld({}, 'demo-key-1001');
  });
  afterEach(async () => w.close());

  it('is told once when it starts and once when it ends, then sent', async () => {
    let down = true;
    const journal = journalReadsDown(w.journal, /FROM outbound_files WHERE id = \?/, () => down);
    const logger = recorder();
    const p = outboundPipeline({ ...w, journal }, { rescanMs: 100 }, { logger });
    await p.start();
    try {
      fs.writeFileSync(path.join(w.dirs.outbox, 'inv.x12'), x12(81));
      const failedDrives = (): number => logger.lines.filter((l) => l.obj.code === 'JOURNAL_UNAVAILABLE').length;
      // Queued again and failing at every rescan, for a while.
      await eventually(() => failedDrives() >= 8, 20_000, 'drives failing');
      const loud = logger.lines.filter((l) => l.level === 'warn' || l.level === 'error');
      expect(loud.filter((l) => l.msg === 'outbound task failed unexpectedly')).toEqual([]);
      expect(loud.map((l) => [l.level, l.msg, l.obj.code])).toEqual([
        ['warn', 'outbound files wait: the journal cannot be used; the next scan queues them again', 'JOURNAL_UNAVAILABLE'],
      ]);
      down = false;
      await eventually(() => listFiles(w.dirs.sent).length === 1, 20_000, 'sent');
      const ended = logger.lines.filter((l) => l.msg === 'outbound files go on again');
      expect(ended.map((l) => l.level)).toEqual(['info']);
      expect(ended[0]?.obj.suppressed as number).toBeGreaterThanOrEqual(7);
    } finally {
      await p.stop(1_000);
    }
  }, 60_000);
});
