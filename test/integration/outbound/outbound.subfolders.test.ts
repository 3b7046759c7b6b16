// Sub-folders of the outbox are the ERP's business: each is reported once and left alone. An ERP
// that makes one per day (2026-11-27/, 2026-11-28/ …) and clears them away again had every name it
// ever used kept in the daemon's memory for good; a folder that is gone is now forgotten, and
// reported again should it come back.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { recorder } from '../../helpers/log-recorder.js';
import { listFiles, makeWorld, outboundPipeline, type TestWorld } from '../../helpers/world.js';
import { x12 } from '../../helpers/edi.js';

let w: TestWorld;

describe('sub-folders in the outbox', () => {
  beforeEach(async () => {
    w = await makeWorld({}, 'demo-key-1001');
  });
  afterEach(async () => w.close());

  it('are reported once while they stay, again when one comes back, and never block the files beside them', async () => {
    const logger = recorder();
    const p = outboundPipeline(w, {}, { logger });
    const reported = (): unknown[] => logger.lines.filter((l) => l.msg === 'outbox entry is a folder; left alone').map((l) => l.obj.file);
    const day = path.join(w.dirs.outbox, '2026-11-27');
    fs.mkdirSync(day);
    fs.writeFileSync(path.join(w.dirs.outbox, 'o1.x12'), x12(1));
    await p.runCycle();
    await p.runCycle();
    expect(reported()).toEqual(['2026-11-27']);
    expect(listFiles(w.dirs.sent)).toEqual(['o1.x12']);

    fs.rmdirSync(day);
    await p.runCycle();
    fs.mkdirSync(day);
    await p.runCycle();
    expect(reported()).toEqual(['2026-11-27', '2026-11-27']);
    expect(fs.existsSync(day)).toBe(true);
  });
});
