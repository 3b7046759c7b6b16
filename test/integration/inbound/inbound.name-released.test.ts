// A parcel's final name is reserved in the process from the moment it is chosen until the parcel is
// confirmed or sent back to be downloaded again. When the journal refused the `staged` commit (a
// full disk, a lost lease), the reservation was kept: the row stayed `listed` with no final path,
// so nothing released it, and the parcel — downloaded again in the next cycle — was delivered under
// a variant of its own name (`orders-<id>.edi`) with `orders.edi` free. For a daemon that runs for
// months, every such refusal also left a name behind for good.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InboundPipeline } from '../../../src/inbound/index.js';
import type { JournalStore, JournalTx } from '../../../src/journal/index.js';
import { inboxConfig, listFiles, makeWorld, type TestWorld } from '../../helpers/world.js';

let w: TestWorld;

/** The journal, refusing the next `staged` transition (every run of its commit) as a full disk would. */
function refusingStagedOnce(journal: JournalStore): JournalStore {
  let armed = true;
  const commit: JournalStore['commit'] = (fn, options) => {
    const refuse = armed;
    return journal.commit((tx) => {
      const guarded: JournalTx = {
        ...tx,
        write: (mailboxId, sql, ...params) => {
          if (refuse && sql.startsWith('UPDATE inbound_parcels') && params[0] === 'staged') {
            armed = false;
            throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
          }
          return tx.write(mailboxId, sql, ...params);
        },
      };
      return fn(guarded);
    }, options);
  };
  return new Proxy(journal, {
    get: (target, prop) => (prop === 'commit' ? commit : (Reflect.get(target, prop, target) as unknown)),
  });
}

describe('a parcel whose staged commit the journal refused', () => {
  beforeEach(async () => {
    w = await makeWorld({}, 'demo-key-1001');
  });
  afterEach(async () => w.close());

  it('keeps its own name when it is downloaded again', async () => {
    const content = Buffer.from("UNA:+.? 'UNB+UNOC:3+SENDER+US+260507:0800+1'");
    await w.emu.inject({ mailboxId: 1001, fileName: 'orders.edi', content });
    const p = new InboundPipeline({
      client: w.client,
      journal: refusingStagedOnce(w.journal),
      mailbox: { mailboxId: 1001, name: 'mb1001', inbox: inboxConfig(w.dirs.inbox) },
      stateDir: w.dirs.state,
    });
    await p.checkPrerequisites();

    expect(await p.runCycle()).toMatchObject({ confirmed: 0, deferred: 1 });
    expect(listFiles(w.dirs.inbox)).toEqual([]);

    expect(await p.runCycle()).toMatchObject({ confirmed: 1 });
    expect(listFiles(w.dirs.inbox)).toEqual(['orders.edi']);
    expect(fs.readFileSync(path.join(w.dirs.inbox, 'orders.edi'))).toEqual(content);
  });
});
