// A parcel's failed step that cannot be recorded because the journal is out of reach (its
// PostgreSQL server down: JOURNAL_UNAVAILABLE): the error line says so with the journal error's
// stable code and fields, to alert on, and the attempt's own code beside them. It carried two
// messages and no code before.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InboundPipeline } from '../../../src/inbound/index.js';
import { x12 } from '../../helpers/edi.js';
import { journalReadsDown } from '../../helpers/journal-reads-down.js';
import { recorder } from '../../helpers/log-recorder.js';
import { inboxConfig, makeWorld, type TestWorld } from '../../helpers/world.js';

let w: TestWorld;

describe('a failed attempt the journal cannot record', () => {
  beforeEach(async () => {
    w = await makeWorld({}, 'demo-key-1001');
  });
  afterEach(async () => w.close());

  it('is logged with the journal error’s code and the attempt’s', async () => {
    await w.emu.inject({ mailboxId: 1001, fileName: 'order.x12', content: Buffer.from(x12(91)) });
    let down = false;
    // The reads of one parcel's row fail once the download has started, as while the server is down.
    const journal = journalReadsDown(w.journal, /FROM inbound_parcels WHERE mailbox_id = \? AND parcel_id = \?/, () => down);
    const logger = recorder();
    const inbox = w.dirs.inbox;
    const p = new InboundPipeline({
      client: w.client,
      journal,
      mailbox: { mailboxId: 1001, name: 'mb1001', inbox: inboxConfig(inbox) },
      stateDir: w.dirs.state,
      logger,
    });
    w.client.downloadParcel = new Proxy(w.client.downloadParcel.bind(w.client), {
      apply(target, _self, args: Parameters<typeof w.client.downloadParcel>) {
        down = true;
        return target(...args);
      },
    });
    await p.runCycle();
    const line = logger.lines.find((l) => l.msg === 'could not record a failed attempt in the journal');
    expect(line?.level).toBe('error');
    expect(line?.obj).toMatchObject({ code: 'JOURNAL_UNAVAILABLE', dbCode: 'ECONNREFUSED', parcelId: expect.any(Number) });
    expect(typeof line?.obj.attemptCode).toBe('string');
  }, 60_000);
});
