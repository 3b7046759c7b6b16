// The envelope check where it acts: files dropped into the outbox, sent or moved to errorDir with
// their reason, through the real pipeline against the emulator.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { OutboxConfig } from '../../../src/outbound/index.js';
import { edifact, x12 } from '../../helpers/edi.js';
import { emulatorParcels, listFiles, makeWorld, outboundPipeline, type TestWorld } from '../../helpers/world.js';

let w: TestWorld;
beforeEach(async () => {
  w = await makeWorld();
});
afterEach(async () => w.close());

const run = async (over: Partial<OutboxConfig> = {}): Promise<void> => {
  await outboundPipeline(w, { stableMs: 50, concurrency: 2, ...over }).runCycle();
};
const sent = async (): Promise<string[]> =>
  (await emulatorParcels(w.emu, 1001))
    .filter((p) => p.direction === 'out')
    .map((p) => p.fileName as string)
    .sort();
const reason = (f: string): string => JSON.parse(fs.readFileSync(path.join(w.dirs.error, `${f}.error.json`), 'utf8')).reason as string;
const drop = (name: string, content: string | Buffer): void => fs.writeFileSync(path.join(w.dirs.outbox, name), content);

describe('outbound envelope check', () => {
  it('sends what real senders write (BOM, a UNA before every interchange, several interchanges) and refuses what is cut or inconsistent', async () => {
    drop('bom.x12', `\u00ef\u00bb\u00bf${x12(1)}\r\n${x12(2)}\r\n`.replace(/\u00ef\u00bb\u00bf/, '\ufeff'));
    drop('multi-una.edi', `${edifact(3)}\n${edifact(4)}\n`);
    drop('middle-cut.x12', `${x12(5)}\n${x12(6).slice(0, x12(6).indexOf('SE*'))}${x12(7)}`);
    drop('empty-refs.edi', "UNB+UNOC:3+GRIDSYNC:ZZ+DEMOPARTNER:ZZ+261122:1200+'UNH+1+ORDERS:D:96A:UN'UNT+2+1'UNZ+1+'");
    drop('wrong-se.x12', x12(8).replace('SE*3*', 'SE*4*'));
    await run();
    expect(await sent()).toEqual(['bom.x12', 'multi-una.edi']);
    expect(listFiles(w.dirs.error).filter((f) => !f.endsWith('.json'))).toEqual(['empty-refs.edi', 'middle-cut.x12', 'wrong-se.x12']);
    expect(reason('middle-cut.x12')).toBe(
      'invalid interchange: interchange 2, segment 12 (ISA): ISA 000000006 is not closed by an IEA before the next ISA',
    );
    expect(reason('empty-refs.edi')).toBe(
      'invalid interchange: interchange 1, segment 1 (UNB): UNB 0020 (interchange control reference) is empty',
    );
    expect(reason('wrong-se.x12')).toBe(
      "invalid interchange: interchange 1, segment 5 (SE): SE01 '4' does not match the 3 segments of ST 0001 (810)",
    );
  });

  it('with envelopeCounts off, a wrong SE01 is sent and a cut interchange is still refused', async () => {
    drop('wrong-se.x12', x12(8).replace('SE*3*', 'SE*4*'));
    drop('cut.x12', x12(9).slice(0, -30));
    await run({ envelopeCounts: false });
    expect(await sent()).toEqual(['wrong-se.x12']);
    expect(reason('cut.x12')).toMatch(/^invalid interchange: interchange 1, segment \d+ \(SE\): ISA 000000009 is not closed by an IEA/);
  });

  it('checks every interchange of a large file, not only its first header and last trailer', async () => {
    // 20 MiB: a file above the old 16 MiB limit, whose first ISA and last IEA match while an
    // interchange in the middle was cut short.
    const one = (n: number): string => x12(n, `N1*ST*${'X'.repeat(200)}`);
    const parts: string[] = [];
    for (let n = 1; parts.length * one(1).length < 20 * 1024 * 1024; n++) parts.push(one(n));
    const mid = Math.floor(parts.length / 2);
    parts[mid] = (parts[mid] as string).slice(0, 200);
    drop('big.x12', `${parts.join('\n')}\n`);
    await run();
    expect(await sent()).toEqual([]);
    // the cut N1 runs into the next ISA, so the reader sees a GS where the SE should be
    expect(reason('big.x12')).toMatch(
      new RegExp(
        `^invalid interchange: interchange ${mid + 1}, segment \\d+ \\(GS\\): ST 0001 \\(810\\) is not closed by an SE before the next GS$`,
      ),
    );
  });
});
