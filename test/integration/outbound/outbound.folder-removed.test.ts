// The outbox folder removed (the ERP's clean-up, a share's mount point gone) while a claim is
// journalled but its file not yet moved: there is no file left to claim. The claim must end as one
// whose file vanished does (an error report saying so), not wait for the folder for ever.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OutboundJournal } from '../../../src/journal/index.js';
import { makeWorld, outboundPipeline, type TestWorld } from '../../helpers/world.js';

let w: TestWorld;
beforeEach(async () => {
  w = await makeWorld();
});
afterEach(async () => {
  await w.close();
});

describe('the outbox folder removed between the claim and its rename', () => {
  it('the claim ends in errorDir as a vanished file', async () => {
    const journal = new OutboundJournal(w.journal);
    const processingDir = path.join(w.dirs.state, 'processing');
    await journal.markClaiming(1001, w.dirs.outbox, 'gone.x12', path.join(w.dirs.outbox, 'gone.x12'), processingDir);
    fs.rmSync(w.dirs.outbox, { recursive: true });

    await outboundPipeline(w, { stableMs: 20 }).runCycle();
    const report = JSON.parse(fs.readFileSync(path.join(w.dirs.error, 'gone.x12.error.json'), 'utf8')) as { reason: string };
    expect(report.reason).toMatch(/vanished from the outbox/);
    expect((await journal.inStates(1001, w.dirs.outbox, ['claiming', 'in_error'])).map((r) => r.state)).toEqual(['in_error']);
  });
});
