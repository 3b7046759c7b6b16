// The emulator's legacy download mode (docs/wire.md#legacy-download): a download hides the parcel
// from the pending list until the service offers it again (`redeliverAfter`) unless it is
// confirmed. A download of ours that fails there leaves our row `listed` and the parcel off a
// complete list: the row ends `taken` (src/inbound/taken-elsewhere.ts) — and must not stay so,
// or the parcel would never be delivered. Offered again, it is delivered, once.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { InboundPipeline } from '../../../src/inbound/index.js';
import { InboundJournal } from '../../../src/journal/index.js';
import { inboxConfig, listFiles, makeWorld, type TestWorld } from '../../helpers/world.js';

let w: TestWorld | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

describe('legacy download mode: a parcel hidden after our failed download', () => {
  it('ends taken while hidden, and is delivered once the service lists it again', async () => {
    const redeliverAfterMs = 400;
    w = await makeWorld({ settings: { acknowledgeDelayMs: 0, legacyDownloadMode: true, redeliverAfterMs } });
    const pipeline = new InboundPipeline({
      client: w.client,
      journal: w.journal,
      mailbox: { mailboxId: 1001, name: 'mb1001', inbox: inboxConfig(w.dirs.inbox) },
      stateDir: w.dirs.state,
    });
    await pipeline.checkPrerequisites();
    const journal = new InboundJournal(w.journal);
    const id = await w.emu.inject({ mailboxId: 1001, fileName: 'p.x12', content: Buffer.from('ISA*p~') });

    w.emu.setFaults({ rules: [{ endpoint: 'parcels.download', wrongBytesRate: 1 }] });
    expect(await pipeline.runCycle()).toMatchObject({ listed: 1, deferred: 1, placed: 0 });
    w.emu.setFaults({ rules: [] });
    const hiddenSince = Date.now();

    // Hidden by the failed download: a complete list no longer shows it.
    expect(await pipeline.runCycle()).toMatchObject({ placed: 0, confirmed: 0 });
    expect((await journal.get(1001, id))?.state).toBe('taken');
    expect(listFiles(w.dirs.inbox)).toEqual([]);

    // Offered again: delivered, once.
    await new Promise((r) => setTimeout(r, Math.max(0, hiddenSince + redeliverAfterMs + 100 - Date.now())));
    expect(await pipeline.runCycle()).toMatchObject({ placed: 1, confirmed: 1 });
    expect(listFiles(w.dirs.inbox)).toEqual(['p.x12']);
    expect(fs.readFileSync(path.join(w.dirs.inbox, 'p.x12'), 'utf8')).toBe('ISA*p~');
    const row = await journal.get(1001, id);
    expect(row).toMatchObject({ state: 'confirmed', attempts: 1 });
  });
});
