// The claimed copy in processing changed size while the file waited for the service (an operator's
// tool, a disk repair, a power cut on a filesystem that lost the tail): before, the copy went out
// as it was — a partner received a cut-short interchange and gridsync archived it as sent. Now
// the upload stops before any byte is sent (REST and SOAP share the check), and the file ends in
// errorDir with the copy and a report saying so.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { x12 } from '../../helpers/edi.js';
import { recorder } from '../../helpers/log-recorder.js';
import { emulatorParcels, listFiles, makeWorld, outboundPipeline, type Protocol, type TestWorld } from '../../helpers/world.js';

let w: TestWorld | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

const processing = (world: TestWorld): string => path.join(world.dirs.state, 'processing');
const state = (world: TestWorld): string => (world.journal.db.prepare('SELECT state FROM outbound_files').get() as { state: string }).state;

describe.each<Protocol>(['rest', 'soap'])('the processing copy changed before the upload (%s)', (protocol) => {
  async function changedWhile(
    fault: Record<string, unknown>,
    waitingIn: string,
    change: (file: string, content: string) => void,
    outbox: { validateEnvelope?: boolean } = {},
  ) {
    const world = (w = await makeWorld({}, 'demo-key-1001', protocol));
    const logger = recorder();
    const p = outboundPipeline(world, outbox, { logger });
    const content = x12(72);
    world.emu.setFaults({ rules: [{ endpoint: 'parcels.upload', ...fault }] });
    fs.writeFileSync(path.join(world.dirs.outbox, 'inv.x12'), content);
    await new Promise((r) => setTimeout(r, 80));
    await p.runCycle();
    expect(state(world)).toBe(waitingIn);
    const [copy] = listFiles(processing(world));
    change(path.join(processing(world), copy as string), content);
    world.emu.setFaults({ rules: [] });
    await p.runCycle();
    await p.runCycle();
    expect(state(world)).toBe('in_error');
    expect((await emulatorParcels(world.emu, 1001)).filter((x) => x.direction === 'out')).toEqual([]);
    expect(listFiles(world.dirs.error)).toEqual(['inv.x12', 'inv.x12.error.json']);
    const report = JSON.parse(fs.readFileSync(path.join(world.dirs.error, 'inv.x12.error.json'), 'utf8')) as Record<string, unknown>;
    expect(report.errorCode).toBe('OUTBOUND_COPY_CHANGED');
    expect(report.reason).toMatch(new RegExp(`not the ${Buffer.byteLength(content)} bytes it was claimed with`));
    expect(logger.lines.filter((l) => l.level === 'error').map((l) => l.msg)).toEqual(['file moved to the error folder']);
  }

  const cut = (file: string, content: string): void => fs.truncateSync(file, Math.floor(content.length / 2));
  const grown = (file: string): void => fs.appendFileSync(file, 'ISA*00*trailing*garbage~');

  // The envelope check (on by default) reads a claimed copy before its first upload and would
  // refuse most damage as an invalid interchange; the size is checked whatever the content.
  const unchecked = { validateEnvelope: false };

  it('claimed (the service answered 429), then cut short: errorDir, nothing sent', async () => {
    await changedWhile({ rate429: 1, retryAfterSeconds: 0 }, 'claimed', cut, unchecked);
  });

  it('claimed, then grown: errorDir, nothing sent', async () => {
    await changedWhile({ rate429: 1, retryAfterSeconds: 0 }, 'claimed', grown, unchecked);
  });

  it('uploading with its outcome unknown (the connection reset), then cut short: errorDir once the list shows it did not arrive', async () => {
    await changedWhile({ resetBeforeRate: 1 }, 'uploading', cut);
  });
});
