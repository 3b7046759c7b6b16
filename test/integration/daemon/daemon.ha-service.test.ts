// Two instances on one PostgreSQL journal, each configured for another service (a staging host
// pointed at production's journal). The journal records its service, but a journal without rows
// was taken over by whichever started: B, started for service Y beside a running A of service X,
// recorded Y and both went on — A writing rows of X's parcels into a journal that names Y, which B
// then reads as Y's. Now B refuses to start while an instance is live on the journal, and an
// instance that finds the journal naming another service (two started at the same moment, or the
// record changed under it) hands back its leases, takes none and fails its cycles until restarted.
import { afterEach, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '@gridsync/emulator';
import { openJournal, recordService } from '../../../src/journal/index.js';
import { eventually, startCli, type CliChild } from '../../helpers/daemon-child.js';
import { makeDaemonWorld, type DaemonWorld } from '../../helpers/daemon-config.js';
import { postgresForFile } from '../../helpers/postgres.js';
import { emulatorParcels, listFiles } from '../../helpers/world.js';

const MAILBOX = 1001;
const server = postgresForFile('instances of two services on one PostgreSQL journal are not tested');
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function emulator(): Promise<Emulator> {
  const emu = await startEmulator({ port: 0, settings: { acknowledgeDelayMs: 0 } });
  cleanups.push(() => emu.close());
  return emu;
}

function world(baseUrl: string, journalUrl: string): DaemonWorld {
  const w = makeDaemonWorld(
    {
      api: { baseUrl, protocol: 'rest', apiKey: 'demo-key-1001' },
      journal: { url: journalUrl, lease: '2s', renew: '300ms' },
      log: { level: 'info', pretty: false },
    },
    { outbox: undefined },
  );
  cleanups.push(() => w.cleanup());
  return w;
}

function run(w: DaemonWorld): CliChild {
  const child = startCli(['run', '-c', w.configFile]);
  cleanups.push(async () => {
    child.kill('SIGKILL');
    await child.exited;
  });
  return child;
}

describe.skipIf(!server.available)('instances of two services on one PostgreSQL journal', () => {
  it('an instance of another service does not take over a journal while one is live on it, even without rows', async () => {
    const [x, y] = [await emulator(), await emulator()];
    const url = await server.createDatabase('ha_service_start');
    const a = run(world(x.url, url));
    await a.waitFor(/mailbox lease taken/);
    const wb = world(y.url, url);
    const refused = await run(wb).exited;
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain('[STARTUP_SERVICE_CHANGED]');
    expect(refused.stderr).toMatch(/instances started for it are running on it/);
    // doctor says so before anyone starts it.
    const doctor = await startCli(['doctor', '-c', wb.configFile]).exited;
    expect(doctor.code).toBe(2);
    expect(doctor.stdout).toMatch(/✗ journal's service: .*instances started for it are running on it/);
    // A goes on with its own service.
    const id = await x.inject({ mailboxId: MAILBOX, fileName: 'po.x12', content: Buffer.from('ISA*00*po~') });
    await eventually(async () => (await emulatorParcels(x, MAILBOX)).find((p) => p.parcelId === id)?.status === 'InBoxTransferred', 20_000);
  });

  it('an instance that finds the journal naming another service hands back its lease and acts on nothing', async () => {
    const [x, y] = [await emulator(), await emulator()];
    const url = await server.createDatabase('ha_service_race');
    const wa = world(x.url, url);
    const a = run(wa);
    await a.waitFor(/mailbox lease taken/);
    // What an instance of Y starting at the same moment as A leaves behind: the journal names Y.
    const journal = await openJournal({ url, stateDir: wa.state }, { owner: 'racing-instance' });
    await recordService(journal, new URL(y.url).origin);
    await journal.close();
    await a.waitFor(/"code":"JOURNAL_SERVICE_CHANGED".*"msg":"holding no mailbox lease"/);
    await a.waitFor(/mailbox lease handed back: this instance may not hold it/);
    await a.waitFor(/journal now serves service[^\n]*"msg":"cycle failed; retrying with backoff"/);
    // A parcel of X waits: A holds no lease, and nothing of X is written into Y's journal.
    await x.inject({ mailboxId: MAILBOX, fileName: 'po.x12', content: Buffer.from('ISA*00*po~') });
    await new Promise((r) => setTimeout(r, 1_500));
    expect(listFiles(wa.inbox)).toEqual([]);
    const after = await openJournal({ url, stateDir: wa.state }, { owner: 'look', readonly: true });
    try {
      expect(await after.all('SELECT parcel_id FROM inbound_parcels')).toEqual([]);
    } finally {
      await after.close();
    }
  });
});
