// Exports that share a name (a daily `daily.x12` re-exported while the service was unreachable)
// wait in processing and are sent together once it answers again. Each must keep its own copy in
// sentDir: their archives ran side by side, each found `daily.x12` free, and each rename replaced
// the copy before it — with 6 waiting, one copy was left and the journal named the same path for all.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { x12 } from '../../helpers/edi.js';
import { emulatorParcels, listFiles, makeWorld, outboundPipeline, type TestWorld } from '../../helpers/world.js';

const sha = (b: Buffer | string): string => createHash('sha256').update(b).digest('hex');
let w: TestWorld;

describe('sentDir: exports of the same name archived together', () => {
  beforeEach(async () => {
    w = await makeWorld({}, 'demo-key-1001');
  });
  afterEach(async () => w.close());

  it('keep a copy each, under names of their own', async () => {
    const p = outboundPipeline(w, { concurrency: 8, maxAttempts: 10 });
    // The connection is reset before the service sees an upload: nothing sent, no attempt counted.
    w.emu.setFaults({ rules: [{ endpoint: 'parcels.upload', resetBeforeRate: 1 }] });
    const contents: string[] = [];
    for (let i = 1; i <= 6; i++) {
      const content = x12(500 + i);
      contents.push(content);
      fs.writeFileSync(path.join(w.dirs.outbox, 'daily.x12'), content);
      await new Promise((r) => setTimeout(r, 80)); // older than stableMs
      await p.runCycle();
      expect(listFiles(w.dirs.outbox)).toEqual([]); // claimed, waiting in processing
    }
    expect(listFiles(w.dirs.sent)).toEqual([]);
    w.emu.setFaults({ rules: [] });
    await p.runCycle();
    const uploads = (await emulatorParcels(w.emu, 1001)).filter((x) => x.direction === 'out');
    expect(uploads.map((u) => u.sha256).sort()).toEqual(contents.map(sha).sort());
    const sent = listFiles(w.dirs.sent);
    expect(sent).toHaveLength(6);
    expect(sent.map((f) => sha(fs.readFileSync(path.join(w.dirs.sent, f)))).sort()).toEqual(contents.map(sha).sort());
    const rows = w.journal.db.prepare("SELECT final_path FROM outbound_files WHERE state = 'archived'").all() as { final_path: string }[];
    expect(new Set(rows.map((r) => r.final_path)).size).toBe(6);
  });
});
