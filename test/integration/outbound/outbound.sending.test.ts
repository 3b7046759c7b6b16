import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { OutboundPipeline, OutboxConfig } from '../../../src/outbound/index.js';
import { OutboundJournal } from '../../../src/journal/index.js';
import { edifact, x12 } from '../../helpers/edi.js';
import { emulatorParcels, listFiles, makeWorld, type Protocol, outboundPipeline, type TestWorld } from '../../helpers/world.js';

let w: TestWorld;

const pipeline = (over: Partial<OutboxConfig> = {}): OutboundPipeline => outboundPipeline(w, { stableMs: 50, concurrency: 4, ...over });

const uploadsByName = async (): Promise<Map<string, number>> => {
  const m = new Map<string, number>();
  for (const p of await emulatorParcels(w.emu, 1001))
    if (p.direction === 'out') m.set(p.fileName as string, (m.get(p.fileName as string) ?? 0) + 1);
  return m;
};

// The same behaviour over both service interfaces (same journal, same guarantees).
describe.each(['rest', 'soap'] as Protocol[])('outbound pipeline against the emulator over %s', (protocol) => {
  beforeEach(async () => {
    w = await makeWorld({}, 'demo-key-1001', protocol);
  });
  afterEach(async () => w.close());

  it('sends every finished file exactly once and archives it; ignores temp names', async () => {
    for (let i = 1; i <= 30; i++) fs.writeFileSync(path.join(w.dirs.outbox, `o${i}.${i % 2 ? 'x12' : 'edi'}`), i % 2 ? x12(i) : edifact(i));
    fs.writeFileSync(path.join(w.dirs.outbox, 'export.tmp'), 'half');
    const p = pipeline();
    await p.checkPrerequisites();
    const r = await p.runCycle();
    expect(r).toMatchObject({ claimed: 30, uploaded: 30, archived: 30, rejected: 0 });
    const ups = await uploadsByName();
    expect(ups.size).toBe(30);
    expect([...ups.values()].every((n) => n === 1)).toBe(true);
    expect(listFiles(w.dirs.sent)).toHaveLength(30);
    expect(listFiles(w.dirs.outbox)).toEqual(['export.tmp']);
    expect(listFiles(path.join(w.dirs.state, 'processing'))).toEqual([]);
  });

  it('moves empty, truncated and duplicate files to the error folder with a reason beside each', async () => {
    fs.writeFileSync(path.join(w.dirs.outbox, 'good.x12'), x12(7));
    fs.writeFileSync(path.join(w.dirs.outbox, 'empty.x12'), '');
    fs.writeFileSync(path.join(w.dirs.outbox, 'cut.x12'), x12(8).slice(0, 150));
    fs.writeFileSync(path.join(w.dirs.outbox, 'cut.edi'), edifact(9).slice(0, 60));
    fs.writeFileSync(path.join(w.dirs.outbox, 'junk.bin'), Buffer.from([1, 2, 3]));
    await pipeline().runCycle();
    fs.writeFileSync(path.join(w.dirs.outbox, 'good-again.x12'), x12(7));
    await pipeline().runCycle();
    expect([...(await uploadsByName()).keys()]).toEqual(['good.x12']);
    const errors = listFiles(w.dirs.error);
    expect(errors).toEqual([
      'cut.edi',
      'cut.edi.error.json',
      'cut.x12',
      'cut.x12.error.json',
      'empty.x12',
      'empty.x12.error.json',
      'good-again.x12',
      'good-again.x12.error.json',
      'junk.bin',
      'junk.bin.error.json',
    ]);
    const reason = (f: string): string => JSON.parse(fs.readFileSync(path.join(w.dirs.error, `${f}.error.json`), 'utf8')).reason as string;
    expect(reason('empty.x12')).toBe('empty file');
    expect(reason('cut.x12')).toMatch(/ISA|IEA|truncated/);
    expect(reason('cut.edi')).toMatch(/truncated|UNZ/);
    expect(reason('good-again.x12')).toMatch(/duplicate content.*good\.x12/);
  });

  it('reconciles after a reset that followed the upload: adopts the parcel instead of sending twice', async () => {
    fs.writeFileSync(path.join(w.dirs.outbox, 'once.x12'), x12(11));
    w.emu.setFaults({ seed: 2, rules: [{ endpoint: 'parcels.upload', resetAfterRate: 1 }] });
    const first = await pipeline().runCycle();
    expect(first).toMatchObject({ claimed: 1, uploaded: 0 });
    expect((await uploadsByName()).get('once.x12')).toBe(1);
    w.emu.setFaults({ rules: [] });
    const second = await pipeline().runCycle();
    expect(second).toMatchObject({ uploaded: 1, archived: 1 });
    expect((await uploadsByName()).get('once.x12')).toBe(1);
    const row = await new OutboundJournal(w.journal).summary();
    expect(row.counts).toEqual({ archived: 1 });
  });

  it('soak: a failed reconciliation never turns into a resend (out-69.edi was uploaded twice)', async () => {
    fs.writeFileSync(path.join(w.dirs.outbox, 'twice.edi'), edifact(69));
    // The upload is processed but its answer is cut short; then the outbox list cannot be read.
    w.emu.setFaults({
      seed: 4,
      rules: [
        { endpoint: 'parcels.upload', truncateRate: 1 },
        { endpoint: 'parcels.outboxList', rate500: 1 },
      ],
    });
    const p = pipeline();
    await p.runCycle();
    await p.runCycle();
    await p.runCycle();
    expect((await uploadsByName()).get('twice.edi')).toBe(1);
    w.emu.setFaults({ rules: [] });
    const r = await p.runCycle();
    expect(r).toMatchObject({ uploaded: 1, archived: 1 });
    expect((await uploadsByName()).get('twice.edi')).toBe(1);
    expect(listFiles(w.dirs.sent)).toEqual(['twice.edi']);
  });

  it('gives a permanent service error to the error folder with its errorCode and HTTP status', async () => {
    fs.writeFileSync(path.join(w.dirs.outbox, 'nowhere.x12'), x12(12).replace('DEMOPARTNER    ', 'NOBODY         '));
    await pipeline().runCycle();
    const report = JSON.parse(fs.readFileSync(path.join(w.dirs.error, 'nowhere.x12.error.json'), 'utf8'));
    expect(report).toMatchObject({ errorCode: 'InvalidParameter', httpStatus: 400 });
    expect(report.reason).toMatch(/cannot route/);
  });

  it('keeps no record of a rejected upload in the process (a daemon rejecting files for months grew by each)', async () => {
    for (let i = 1; i <= 5; i++)
      fs.writeFileSync(path.join(w.dirs.outbox, `nowhere${i}.x12`), x12(i).replace('DEMOPARTNER    ', 'NOBODY         '));
    fs.writeFileSync(path.join(w.dirs.outbox, 'fine.x12'), x12(9));
    const p = pipeline();
    expect(await p.runCycle()).toMatchObject({ uploaded: 1, failed: 5 });
    expect(listFiles(w.dirs.error)).toHaveLength(10); // each file and its report
    // Which upload each row's last attempt started under matters only while the row is uploading.
    const attemptsTracked = (p as unknown as { sender: { startedUnder: Map<number, unknown> } }).sender.startedUnder;
    expect(attemptsTracked.size).toBe(0);
  });

  it('never claims a file while it is still being written (watch mode), and sends it once finished', async () => {
    const p = pipeline({ stableMs: 300 });
    await p.recover();
    await p.start();
    const file = path.join(w.dirs.outbox, 'slow.x12');
    const content = x12(13, 'N1*ST*'.padEnd(3000, 'X'));
    const fd = fs.openSync(file, 'w');
    for (let i = 0; i < 5; i++) {
      fs.writeSync(fd, content.slice((i * content.length) / 5, ((i + 1) * content.length) / 5));
      await new Promise((r) => setTimeout(r, 100));
      expect((await uploadsByName()).size).toBe(0);
    }
    fs.closeSync(fd);
    for (let i = 0; i < 100 && listFiles(w.dirs.sent).length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    await p.stop();
    expect(fs.readFileSync(path.join(w.dirs.sent, 'slow.x12'), 'utf8')).toBe(content);
    const parcels = await emulatorParcels(w.emu, 1001);
    expect(parcels.find((x) => x.fileName === 'slow.x12')?.bytes).toBe(content.length);
  });
});
