// The emulator's legacy download mode (docs/wire.md#legacy-download): a download hides the parcel
// from the pending list until the service offers it again (`redeliverAfter`) unless it is
// confirmed. A download of ours that fails there leaves our row `listed` and the parcel off a
// complete list. Ending such a row `taken` (src/inbound/taken-elsewhere.ts) would leave the parcel
// to a service that offers it again — and nothing says the real one does. The service, asked,
// shows it still ready: it is downloaded by id at the next cycle and delivered, once.
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
  it('is downloaded again by id while hidden, and delivered once', async () => {
    // Never offered again within the test: what a service without such a timer does.
    w = await makeWorld({ settings: { acknowledgeDelayMs: 0, legacyDownloadMode: true, redeliverAfterMs: 3_600_000 } });
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

    // Hidden by the failed download (a complete list no longer shows it), still ready on the service.
    expect(await pipeline.runCycle()).toMatchObject({ placed: 1, confirmed: 1 });
    expect(listFiles(w.dirs.inbox)).toEqual(['p.x12']);
    expect(fs.readFileSync(path.join(w.dirs.inbox, 'p.x12'), 'utf8')).toBe('ISA*p~');
    expect(await journal.get(1001, id)).toMatchObject({ state: 'confirmed', attempts: 1 });
    expect(await pipeline.runCycle()).toMatchObject({ placed: 0 });
    expect(listFiles(w.dirs.inbox)).toEqual(['p.x12']);
  });
});
