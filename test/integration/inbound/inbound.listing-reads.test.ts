// A partner who sends bad files for a week leaves hundreds of failed parcels pending on the service,
// listed again every cycle. The listing once read the event trail for each of them (has an operator
// asked for it again?): a statement per failed parcel per cycle, on PostgreSQL a round trip each.
// Counted from the outside on both backends — the statements the journal is handed, and on
// PostgreSQL the queries that reach the server through a counting proxy — a cycle over 500 such
// parcels costs what a cycle over 5 does.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '@gridsync/emulator';
import { GridClient } from '../../../src/api/index.js';
import { InboundPipeline } from '../../../src/inbound/index.js';
import { InboundJournal, Journal, PgJournal, type JournalStore, type JournalTx } from '../../../src/journal/index.js';
import { pgWireProxy } from '../../helpers/pg-wire-proxy.js';
import { postgresForFile } from '../../helpers/postgres.js';
import { inboxConfig } from '../../helpers/world.js';

const MB = 1001;
const server = postgresForFile('the listing reads on the PostgreSQL backend are not counted');
const cleanups: (() => Promise<unknown> | void)[] = [];

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The store as the pipeline sees it, counting every statement it is handed (commits' included). */
function counting(store: JournalStore): { store: JournalStore; statements: () => number } {
  let n = 0;
  const tx = (inner: JournalTx): JournalTx => ({
    get: (sql, ...p) => (n++, inner.get(sql, ...p)),
    all: (sql, ...p) => (n++, inner.all(sql, ...p)),
    write: (m, sql, ...p) => (n++, inner.write(m, sql, ...p)),
    recordEvent: (e) => (n++, inner.recordEvent(e)),
  });
  const counted = new Proxy(store, {
    get(target, key, receiver) {
      if (key === 'get' || key === 'all' || key === 'maintain')
        return (sql: string, ...p: unknown[]) => (n++, (target[key] as (s: string, ...q: unknown[]) => unknown).call(target, sql, ...p));
      if (key === 'commit') return (fn: (t: JournalTx) => Promise<unknown>, o?: object) => target.commit((t) => fn(tx(t)), o);
      const v: unknown = Reflect.get(target, key, receiver);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return { store: counted, statements: () => n };
}

/**
 * A TCP proxy in front of PostgreSQL that counts the queries the server receives: a simple query
 * (`Q`) or the `Sync` closing an extended one (`S`; the driver sends one per query).
 */
async function queryCountingProxy(port: number): Promise<{ port: number; queries: () => number; close: () => Promise<void> }> {
  let queries = 0;
  const proxy = await pgWireProxy(port, (_connection, type) => {
    if (type === 0x51 || type === 0x53) queries++;
  });
  return { port: proxy.port, queries: () => queries, close: proxy.close };
}

interface Backend {
  readonly name: string;
  /** A journal holding the mailbox's lease, and the queries its server received so far, where counted there. */
  open(dir: string): Promise<{ journal: JournalStore; serverQueries?: () => number }>;
}

let databases = 0;
const backends: Backend[] = [
  { name: 'sqlite', open: async (dir) => ({ journal: Journal.open(path.join(dir, 'journal.sqlite')) }) },
  ...(server.available
    ? [
        {
          name: 'postgres',
          async open() {
            const url = new URL(await server.createDatabase(`listing_${++databases}`));
            const proxy = await queryCountingProxy(server.port);
            cleanups.push(proxy.close);
            url.port = String(proxy.port);
            const journal = await PgJournal.open(url.href, 'test', { owner: 'listing' });
            expect(await journal.leases.acquire(MB, 600_000)).toBeDefined();
            return { journal, serverQueries: proxy.queries };
          },
        },
      ]
    : []),
];

describe.each(backends)('the listing with failed parcels pending: $name', (backend) => {
  it('reads the journal in as many statements for 500 failed parcels as for 5', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-listing-reads-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const emu: Emulator = await startEmulator({ settings: { acknowledgeDelayMs: 0 } });
    cleanups.push(() => emu.close());
    const client = new GridClient({ baseUrl: emu.url, auth: { apiKey: 'demo-key-1001' }, sleep: async () => undefined });
    cleanups.push(() => client.close());
    const { journal, serverQueries } = await backend.open(dir);
    cleanups.push(() => journal.close());
    const counted = counting(journal);
    const pipeline = new InboundPipeline({
      client,
      journal: counted.store,
      mailbox: { mailboxId: MB, name: 'mb1001', inbox: inboxConfig(path.join(dir, 'inbox')) },
      stateDir: path.join(dir, 'state'),
    });
    await pipeline.checkPrerequisites();
    const inbound = new InboundJournal(journal);

    /** Brings the failed parcels pending on the service to `total`, then counts one cycle's journal work. */
    const cycleWith = async (total: number, already: number) => {
      const ids: number[] = [];
      for (let k = already; k < total; k++)
        ids.push(await emu.inject({ mailboxId: MB, fileName: `bad-${k}.x12`, content: Buffer.from(`ISA*bad ${k}~`) }));
      await Promise.all(ids.map((id) => inbound.recordListed(MB, { parcelId: id })));
      await Promise.all(ids.map((id) => inbound.markFailed(MB, id, 'content did not verify')));
      const statements = counted.statements();
      const queries = serverQueries?.();
      const result = await pipeline.runCycle();
      expect(result).toMatchObject({ listed: 0, placed: 0, redelivered: 0, failed: 0 });
      const failed = await journal.get<{ n: number }>("SELECT count(*) AS n FROM inbound_parcels WHERE state = 'failed'");
      expect(failed?.n).toBe(total);
      return {
        statements: counted.statements() - statements,
        queries: queries === undefined ? undefined : (serverQueries?.() ?? 0) - queries,
      };
    };

    const few = await cycleWith(5, 0);
    const many = await cycleWith(500, 5);
    expect(few.statements).toBeGreaterThan(0);
    // Within a small constant (a read chunk more), not a statement per parcel.
    expect.soft(many.statements, 'statements handed to the journal').toBeLessThanOrEqual(few.statements + 2);
    if (few.queries !== undefined) {
      expect(few.queries).toBeGreaterThan(0);
      expect.soft(many.queries, 'queries the server received').toBeLessThanOrEqual(few.queries + 2);
    }
  });
});
