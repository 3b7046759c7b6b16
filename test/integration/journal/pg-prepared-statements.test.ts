// Every distinct SQL text the PostgreSQL journal sends is a named statement, prepared on each
// pooled connection for the connection's life. The reads of a whole pending list (`getMany`, the
// operator's requests) and retention's deletes put one `?` per id: every list length was another
// prepared statement. A mailbox whose pending list grows by one failed parcel a cycle (a partner's
// bad files, listed for days) prepared two more statements every cycle, on every connection that
// served the cycle. Counted from the outside: a proxy in front of a real PostgreSQL server records
// the names of the statements each connection prepares (the `Parse` messages of the wire protocol).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmulator } from '@gridsync/emulator';
import { GridClient } from '../../../src/api/index.js';
import { InboundPipeline } from '../../../src/inbound/index.js';
import { InboundJournal, PgJournal, pruneFailedParcels } from '../../../src/journal/index.js';
import { pgWireProxy } from '../../helpers/pg-wire-proxy.js';
import { postgresForFile } from '../../helpers/postgres.js';
import { inboxConfig } from '../../helpers/world.js';

const MB = 1001;
const server = postgresForFile('the prepared statements of the PostgreSQL journal are not counted');
const cleanups: (() => Promise<unknown> | void)[] = [];

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The names of the statements each connection prepared (`P` messages with a name), through a proxy. */
async function preparingProxy(port: number): Promise<{ port: number; perConnection: () => number[]; close: () => Promise<void> }> {
  const prepared: Set<string>[] = [];
  const proxy = await pgWireProxy(port, (connection, type, message) => {
    const names = (prepared[connection] ??= new Set<string>());
    if (type !== 0x50) return;
    const name = message.toString('utf8', 5, message.indexOf(0, 5));
    if (name !== '') names.add(name);
  });
  return { port: proxy.port, perConnection: () => Array.from(prepared, (s) => s?.size ?? 0), close: proxy.close };
}

describe.skipIf(!server.available)('prepared statements on the PostgreSQL journal', () => {
  it('a pending list one parcel longer each cycle prepares no statement per length', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-prepared-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const emu = await startEmulator({ settings: { acknowledgeDelayMs: 0 } });
    cleanups.push(() => emu.close());
    const client = new GridClient({ baseUrl: emu.url, auth: { apiKey: 'demo-key-1001' }, sleep: async () => undefined });
    cleanups.push(() => client.close());
    const url = new URL(await server.createDatabase('prepared'));
    const proxy = await preparingProxy(server.port);
    cleanups.push(proxy.close);
    url.port = String(proxy.port);
    const journal = await PgJournal.open(url.href, 'test', { owner: 'prepared' });
    cleanups.push(() => journal.close());
    expect(await journal.leases.acquire(MB, 600_000)).toBeDefined();
    const pipeline = new InboundPipeline({
      client,
      journal,
      mailbox: { mailboxId: MB, name: 'mb1001', inbox: inboxConfig(path.join(dir, 'inbox')) },
      stateDir: path.join(dir, 'state'),
    });
    await pipeline.checkPrerequisites();
    const inbound = new InboundJournal(journal);

    const ids: number[] = [];
    /** One more failed parcel pending on the service (a partner's bad file), then a cycle. */
    const cycleWithOneMore = async (k: number) => {
      const id = await emu.inject({ mailboxId: MB, fileName: `bad-${k}.x12`, content: Buffer.from(`ISA*bad ${k}~`) });
      ids.push(id);
      await inbound.recordListed(MB, { parcelId: id });
      await inbound.markFailed(MB, id, 'content did not verify');
      await pipeline.runCycle();
    };
    await cycleWithOneMore(0);
    const most = () => Math.max(...proxy.perConnection());
    const afterOne = most();
    const cycles = 80;
    for (let k = 1; k < cycles; k++) await cycleWithOneMore(k);
    const afterMany = most();
    // Retention deleting the failed rows whose parcel the service dropped: 1, 2, … 12 at a time.
    let dropped = 0;
    for (let n = 1; n <= 12; n++) {
      dropped += n;
      expect(await pruneFailedParcels(journal, MB, -1, async () => new Set(ids.slice(dropped)))).toBe(n);
    }
    const afterPrunes = most();
    // Two list reads a cycle, and one delete a prune: at most a few padded lengths each, not one per length.
    expect(afterOne).toBeGreaterThan(0);
    expect
      .soft(afterMany - afterOne, `prepared on one connection: ${afterOne} after one cycle, ${afterMany} after ${cycles}`)
      .toBeLessThanOrEqual(12);
    expect(afterPrunes - afterMany, `prepared by 12 prunes: ${afterPrunes - afterMany}`).toBeLessThanOrEqual(8);
  });
});
