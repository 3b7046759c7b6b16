// `once` waits for young files to settle for a bounded time; that bound is about files that keep
// changing, not about how long the scans take. Here the pipeline's clock runs fast (each reading
// 1.5 s later than the last, as on a machine slowed down by a big drop's claims): a file that is
// merely young at the first scan must still be sent in the same cycle.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { x12 } from '../../helpers/edi.js';
import { listFiles, makeWorld, outboundPipeline, type TestWorld } from '../../helpers/world.js';

let w: TestWorld;
beforeEach(async () => {
  w = await makeWorld();
});
afterEach(async () => w.close());

describe('once on a slow machine', () => {
  it('sends a file that was only young at the first scan, however long the scans took', async () => {
    let t = Date.now();
    const pipeline = outboundPipeline(w, { stableMs: 200 }, { now: () => (t += 1500) });
    fs.writeFileSync(path.join(w.dirs.outbox, 'young.x12'), x12(77));
    const r = await pipeline.runCycle();
    expect(r).toMatchObject({ claimed: 1, uploaded: 1, archived: 1 });
    expect(listFiles(w.dirs.sent)).toEqual(['young.x12']);
    expect(listFiles(w.dirs.outbox)).toEqual([]);
  });
});
