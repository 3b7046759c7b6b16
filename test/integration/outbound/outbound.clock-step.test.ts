// A writer that pauses in the middle of a file while the wall clock is stepped forward (NTP
// correcting a clock that ran slow, a VM resumed from a suspend) must not have its file taken as
// finished: the file's age comes from its times, and the step makes them look an hour old. The same
// holds for a share whose server's clock runs behind ours.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { x12 } from '../../helpers/edi.js';
import { listFiles, makeWorld, outboundPipeline, type TestWorld } from '../../helpers/world.js';

let w: TestWorld;
beforeEach(async () => {
  w = await makeWorld();
});
afterEach(async () => {
  vi.restoreAllMocks();
  await w.close();
});

describe('outbox readiness across a wall clock stepped forward', () => {
  it('a half-written file is not claimed at its first sighting after the step; finished, it is sent whole', async () => {
    const realNow = Date.now.bind(Date);
    let stepMs = 0;
    vi.spyOn(Date, 'now').mockImplementation(() => realNow() + stepMs);
    // The first cycle's waits for settling files are skipped: only the scans' own view counts.
    let instant = true;
    const sleep = (ms: number): Promise<void> => (instant ? Promise.resolve() : new Promise((r) => setTimeout(r, ms)));
    const pipeline = outboundPipeline(w, { stableMs: 1000 }, { sleep });
    const file = path.join(w.dirs.outbox, 'order.x12');
    const whole = x12(41);
    fs.writeFileSync(file, whole.slice(0, 60)); // the writer stops half way
    stepMs = 3_600_000;

    const first = await pipeline.runCycle();
    expect(first.claimed).toBe(0);
    expect(listFiles(w.dirs.outbox)).toEqual(['order.x12']);
    expect(listFiles(w.dirs.error)).toEqual([]);

    fs.appendFileSync(file, whole.slice(60));
    instant = false;
    const second = await pipeline.runCycle();
    expect(second).toMatchObject({ claimed: 1, uploaded: 1, archived: 1, rejected: 0 });
    expect(fs.readFileSync(path.join(w.dirs.sent, 'order.x12'), 'utf8')).toBe(whole);
  });

  it('on a network share a file is never taken as settled at its first sighting: the server clock may run behind ours', async () => {
    const realNow = Date.now.bind(Date);
    vi.spyOn(Date, 'now').mockImplementation(() => realNow() + 3_600_000); // our clock an hour ahead of the server's
    const realStatfs = fsp.statfs.bind(fsp);
    vi.spyOn(fsp, 'statfs').mockImplementation((async (p: string) => ({ ...(await realStatfs(p)), type: 0x6969 })) as typeof fsp.statfs);
    let instant = true;
    const sleep = (ms: number): Promise<void> => (instant ? Promise.resolve() : new Promise((r) => setTimeout(r, ms)));
    const pipeline = outboundPipeline(w, { stableMs: 1000 }, { sleep });
    const file = path.join(w.dirs.outbox, 'order.x12');
    const whole = x12(42);
    fs.writeFileSync(file, whole.slice(0, 60));

    expect((await pipeline.runCycle()).claimed).toBe(0);
    expect(listFiles(w.dirs.outbox)).toEqual(['order.x12']);

    fs.appendFileSync(file, whole.slice(60));
    instant = false;
    expect(await pipeline.runCycle()).toMatchObject({ claimed: 1, archived: 1, rejected: 0 });
    expect(fs.readFileSync(path.join(w.dirs.sent, 'order.x12'), 'utf8')).toBe(whole);
  });
});
