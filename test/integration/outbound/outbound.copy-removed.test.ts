// An operator clears the processing folder while files wait there (the service unreachable or
// refusing for a while). Each such file was not sent and its copy is gone: it ends in errorDir as a
// report saying so. Before, a claimed row stayed claimed for good, every pass failing on the missing
// file ("outbound task failed unexpectedly"), never counted, never reported.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { x12 } from '../../helpers/edi.js';
import { recorder } from '../../helpers/log-recorder.js';
import { emulatorParcels, listFiles, makeWorld, outboundPipeline, type TestWorld } from '../../helpers/world.js';

let w: TestWorld;

describe('the processing copy removed before the upload', () => {
  beforeEach(async () => {
    w = await makeWorld({}, 'demo-key-1001');
  });
  afterEach(async () => w.close());

  const processing = (): string => path.join(w.dirs.state, 'processing');
  const state = (): string => (w.journal.db.prepare('SELECT state FROM outbound_files').get() as { state: string }).state;

  async function removedWhile(fault: Record<string, unknown>, waitingIn: string) {
    const logger = recorder();
    const p = outboundPipeline(w, {}, { logger });
    w.emu.setFaults({ rules: [{ endpoint: 'parcels.upload', ...fault }] });
    fs.writeFileSync(path.join(w.dirs.outbox, 'inv.x12'), x12(71));
    await new Promise((r) => setTimeout(r, 80));
    await p.runCycle();
    expect(state()).toBe(waitingIn);
    for (const f of listFiles(processing())) fs.rmSync(path.join(processing(), f));
    w.emu.setFaults({ rules: [] });
    await p.runCycle();
    await p.runCycle();
    expect(state()).toBe('in_error');
    expect(listFiles(w.dirs.error)).toEqual(['inv.x12.error.json']);
    const report = JSON.parse(fs.readFileSync(path.join(w.dirs.error, 'inv.x12.error.json'), 'utf8')) as Record<string, unknown>;
    expect(report.errorCode).toBe('OUTBOUND_COPY_REMOVED');
    expect(report.reason).toMatch(/removed before it was sent/);
    expect((await emulatorParcels(w.emu, 1001)).filter((x) => x.direction === 'out')).toEqual([]);
    // Nothing to requeue: the command would name a file errorDir does not hold (it said so before).
    expect(report.requeue).toBeNull();
    // One line for the operator, none about a task failing unexpectedly; it names the report, not
    // an errorFile that is not there ("file moved to the error folder" before).
    const errors = logger.lines.filter((l) => l.level === 'error');
    expect(errors.map((l) => [l.msg, l.obj.report, l.obj.errorFile])).toEqual([
      ['file refused; no file left to move, its report is in the error folder', path.join(w.dirs.error, 'inv.x12.error.json'), undefined],
    ]);
  }

  it('claimed (the service answered 429): errorDir, nothing sent', async () => {
    await removedWhile({ rate429: 1, retryAfterSeconds: 0 }, 'claimed');
  });

  it('uploading with its outcome unknown (the connection reset): errorDir once the outbox list shows it did not arrive', async () => {
    await removedWhile({ resetBeforeRate: 1 }, 'uploading');
  });
});
