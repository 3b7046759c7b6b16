// The journal belongs to one service. Its rows are keyed by mailbox and parcel id alone, and two
// services number their parcels alike (both emulators here start at 100001): pointed at service B
// while it held a row of service A placed but not confirmed, `gridsync once` confirmed B's parcel
// 100001 — never downloaded, so lost — and exited 0. Now the journal records its service and a
// start against another one is refused (exit 2) while the journal holds rows; a journal that never
// carried anything is taken over; REST and SOAP of one service are one service; and
// `gridsync journal set-service` records a new address of the same service. `once --dry-run` and
// `redeliver` use the journal without a start: the dry run showed B's pending parcels against A's
// rows, and redeliver had B reset its parcel and noted that in A's journal; both refuse the same way.
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '@gridsync/emulator';
import { Journal } from '../../../src/journal/index.js';
import { onceChild, runCli, startCli } from '../../helpers/daemon-child.js';
import { makeDaemonWorld, type DaemonWorld } from '../../helpers/daemon-config.js';
import { postgresForFile } from '../../helpers/postgres.js';
import { emulatorParcels, listFiles } from '../../helpers/world.js';

const MAILBOX = 1001;
const PG_SECRET = 'svc-ch4nge-s3cret';
const server = postgresForFile('a service change on a PostgreSQL journal is not tested');
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function emulator(dataFile?: string): Promise<Emulator> {
  const emu = await startEmulator({ port: 0, settings: { acknowledgeDelayMs: 0 }, ...(dataFile ? { dataFile } : {}) });
  cleanups.push(() => emu.close());
  return emu;
}

function world(baseUrl: string): DaemonWorld {
  const w = makeDaemonWorld({ api: { baseUrl, protocol: 'rest', apiKey: 'demo-key-1001' } }, { outbox: undefined });
  cleanups.push(() => w.cleanup());
  return w;
}

/** Edits the world's config file: what an operator does between two runs. */
function configure(w: DaemonWorld, edit: (c: Record<string, any>) => void): void {
  const c = YAML.parse(fs.readFileSync(w.configFile, 'utf8')) as Record<string, any>;
  edit(c);
  fs.writeFileSync(w.configFile, YAML.stringify(c));
}

const inject = (emu: Emulator, fileName: string): Promise<number> =>
  emu.inject({ mailboxId: MAILBOX, fileName, content: Buffer.from(`ISA*00*${fileName}~`) });

async function statusOf(emu: Emulator, parcelId: number): Promise<unknown> {
  return (await emulatorParcels(emu, MAILBOX)).find((p) => p.parcelId === parcelId)?.status;
}

async function recorded(w: DaemonWorld): Promise<string | undefined> {
  const j = Journal.open(path.join(w.state, 'journal.sqlite'), { readonly: true });
  try {
    return await j.getMeta('service');
  } finally {
    await j.close();
  }
}

/** The journal's event trail, in order. */
async function journalEvents(w: DaemonWorld): Promise<unknown[]> {
  const j = Journal.open(path.join(w.state, 'journal.sqlite'), { readonly: true });
  try {
    return await j.all('SELECT * FROM events ORDER BY id');
  } finally {
    await j.close();
  }
}

/** `gridsync once` against A, killed with the parcel placed but not yet confirmed. */
async function crashBeforeConfirm(w: DaemonWorld): Promise<void> {
  const crashed = await onceChild(w.configFile, 'in.placed:1');
  expect(crashed.signal, crashed.stderr).toBe('SIGKILL');
  expect(listFiles(w.inbox)).toEqual(['a.x12']);
}

describe('a journal against another service', () => {
  it('with a placed row of A, a start against B is refused; B keeps its parcel; A is finished, B gets a journal of its own', async () => {
    const [a, b] = [await emulator(), await emulator()];
    const aParcel = await inject(a, 'a.x12');
    const bParcel = await inject(b, 'b.x12');
    expect(bParcel, 'both services number their first parcel alike').toBe(aParcel);
    const w = world(a.url);
    await crashBeforeConfirm(w);

    configure(w, (c) => (c.api.baseUrl = b.url));
    const refused = await onceChild(w.configFile);
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain('[STARTUP_SERVICE_CHANGED]');
    expect(refused.stderr).toContain(`journal ${path.join(w.state, 'journal.sqlite')}`);
    expect(refused.stderr).toContain(`service ${a.url}`);
    expect(refused.stderr).toContain(`service ${b.url}`);
    expect(refused.stderr).toContain('gridsync once');
    expect(refused.stderr).toContain(`gridsync journal set-service -c ${w.configFile}`);
    expect(await statusOf(b, bParcel), "B's parcel is not confirmed").toBe('InBoxReady');
    expect(listFiles(w.inbox), "nor is B's parcel in the inbox").toEqual(['a.x12']);
    expect(
      b.requests().filter((r) => !r.path.startsWith('/_emulator/')),
      'B was not asked anything',
    ).toEqual([]);
    expect(await recorded(w)).toBe(a.url);

    // Asynchronously: the emulators answer from this process.
    const doctor = await startCli(['doctor', '-c', w.configFile]).exited;
    expect(doctor.code).toBe(2);
    expect(doctor.stdout).toMatch(/✗ journal's service: journal .* holds the work of service http:\/\/127\.0\.0\.1:\d+, but api\.baseUrl/);
    expect(doctor.stdout).toContain(`gridsync journal set-service -c ${w.configFile}`);

    // The first remedy: finish A's work against A, then give B a journal of its own.
    configure(w, (c) => (c.api.baseUrl = a.url));
    const finished = await onceChild(w.configFile);
    expect(finished.code, finished.stderr).toBe(0);
    expect(await statusOf(a, aParcel)).not.toBe('InBoxReady');
    configure(w, (c) => {
      c.api.baseUrl = b.url;
      c.stateDir = './state-b';
    });
    const onB = await onceChild(w.configFile);
    expect(onB.code, onB.stderr).toBe(0);
    expect(listFiles(w.inbox)).toEqual(['a.x12', 'b.x12']);
    expect(fs.readFileSync(path.join(w.inbox, 'b.x12'), 'utf8')).toBe('ISA*00*b.x12~');
    expect(await statusOf(b, bParcel)).not.toBe('InBoxReady');
  });

  it('the same service at a new address: refused until `gridsync journal set-service` records it; then its placed parcel is confirmed', async () => {
    const w = world('embedded');
    const dataFile = path.join(w.dir, 'service.sqlite');
    let a = await emulator(dataFile);
    const parcel = await inject(a, 'a.x12');
    configure(w, (c) => (c.api.baseUrl = a.url));
    await crashBeforeConfirm(w);
    const before = a.url;
    await a.close();
    a = await emulator(dataFile);
    expect(a.url).not.toBe(before);

    configure(w, (c) => (c.api.baseUrl = a.url));
    const refused = await onceChild(w.configFile);
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain('[STARTUP_SERVICE_CHANGED]');

    const set = runCli(['journal', 'set-service', '-c', w.configFile]);
    expect(set.status, set.stderr).toBe(0);
    expect(set.stdout).toBe(`journal ${path.join(w.state, 'journal.sqlite')}: service ${before} → ${a.url}\n`);
    const again = runCli(['journal', 'set-service', '-c', w.configFile]);
    expect(again.stdout).toContain('nothing changed');

    const done = await onceChild(w.configFile);
    expect(done.code, done.stderr).toBe(0);
    expect(await statusOf(a, parcel)).not.toBe('InBoxReady');
    expect(listFiles(w.inbox)).toEqual(['a.x12']);
    expect(
      a.requests().some((r) => r.path.includes('download')),
      'placed before: not downloaded again',
    ).toBe(false);
  });

  it("set-service is the operator's word: naming another service, the journal's rows are taken for its parcels", async () => {
    // Documented as such (docs/operations.md, "Changing the service"): set-service is for the same
    // service at a new address. Given another one, the placed row of A confirms B's parcel 100001,
    // which was never downloaded — the loss the refusal prevents.
    const [a, b] = [await emulator(), await emulator()];
    await inject(a, 'a.x12');
    const bParcel = await inject(b, 'b.x12');
    const w = world(a.url);
    await crashBeforeConfirm(w);
    configure(w, (c) => (c.api.baseUrl = b.url));
    expect(runCli(['journal', 'set-service', '-c', w.configFile]).status).toBe(0);
    const taken = await onceChild(w.configFile);
    expect(taken.code, taken.stderr).toBe(0);
    expect(await statusOf(b, bParcel)).toBe('InBoxTransferred');
    expect(listFiles(w.inbox)).toEqual(['a.x12']);
  });

  it('once --dry-run and redeliver refuse it too (exit 2, the same code), before B is asked anything', async () => {
    const [a, b] = [await emulator(), await emulator()];
    await inject(a, 'a.x12');
    const bParcel = await inject(b, 'b.x12');
    const w = world(a.url);
    await crashBeforeConfirm(w);
    configure(w, (c) => (c.api.baseUrl = b.url));
    const eventsBefore = await journalEvents(w);

    // Asynchronously: the emulators answer from this process.
    const dry = await startCli(['once', '--dry-run', '-c', w.configFile]).exited;
    expect(dry.code, dry.stdout + dry.stderr).toBe(2);
    expect(dry.stderr).toContain('[STARTUP_SERVICE_CHANGED]');
    expect(dry.stderr).toContain(`journal ${path.join(w.state, 'journal.sqlite')} holds the work of service ${a.url}`);
    expect(dry.stdout, 'no report of what B holds').toBe('');

    const redeliver = await startCli(['redeliver', String(bParcel), '-c', w.configFile]).exited;
    expect(redeliver.code, redeliver.stdout + redeliver.stderr).toBe(2);
    expect(redeliver.stderr).toContain('[STARTUP_SERVICE_CHANGED]');
    expect(redeliver.stderr).toContain(`gridsync journal set-service -c ${w.configFile}`);
    expect(redeliver.stdout).toBe('');

    expect(
      b.requests().filter((r) => !r.path.startsWith('/_emulator/')),
      'B was not asked anything (no session, no list, no reset)',
    ).toEqual([]);
    expect(await journalEvents(w), 'nothing journalled').toEqual(eventsBefore);
    expect(await recorded(w)).toBe(a.url);
  });

  it('set-service refuses while a gridsync holds the journal', async () => {
    const a = await emulator();
    const w = world(a.url);
    const held = Journal.open(path.join(w.state, 'journal.sqlite'));
    cleanups.push(() => held.close());
    const r = runCli(['journal', 'set-service', '-c', w.configFile]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('[JOURNAL_LOCKED]');
  });

  it('a journal that never carried a row is taken over by the new service', async () => {
    const [a, b] = [await emulator(), await emulator()];
    const w = world(a.url);
    const empty = await onceChild(w.configFile);
    expect(empty.code, empty.stderr).toBe(0);
    expect(await recorded(w)).toBe(a.url);

    const bParcel = await inject(b, 'b.x12');
    configure(w, (c) => (c.api.baseUrl = b.url));
    const onB = await onceChild(w.configFile);
    expect(onB.code, onB.stderr).toBe(0);
    expect(await recorded(w)).toBe(b.url);
    expect(listFiles(w.inbox)).toEqual(['b.x12']);
    expect(await statusOf(b, bParcel)).not.toBe('InBoxReady');
  });

  it('REST to SOAP on the same service (its full …/GridOS.asmx address) is the same service', async () => {
    const a = await emulator();
    const parcel = await inject(a, 'a.x12');
    const w = world(a.url);
    await crashBeforeConfirm(w);

    configure(w, (c) => {
      c.api.protocol = 'soap';
      c.api.baseUrl = `${a.url}/v4.1/prod/GridOS.asmx`;
    });
    const soap = await onceChild(w.configFile);
    expect(soap.code, soap.stderr).toBe(0);
    expect(await statusOf(a, parcel)).not.toBe('InBoxReady');
    expect(listFiles(w.inbox)).toEqual(['a.x12']);
    expect(await recorded(w)).toBe(a.url);
  });

  describe.skipIf(!server.available)('on a PostgreSQL journal', () => {
    it('the refusal names the journal by its URL with the password masked (a start, the dry run, redeliver)', async () => {
      const [a, b] = [await emulator(), await emulator()];
      await inject(a, 'a.x12');
      const url = (await server.createDatabase('service_change')).replace('postgres@', `postgres:${PG_SECRET}@`);
      const w = world(a.url);
      configure(w, (c) => (c.journal = { url }));
      await crashBeforeConfirm(w);
      configure(w, (c) => (c.api.baseUrl = b.url));
      const refused = await onceChild(w.configFile);
      expect(refused.code, refused.stderr).toBe(2);
      expect(refused.stderr).toContain('[STARTUP_SERVICE_CHANGED]');
      expect(refused.stderr).toMatch(/journal postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/service_change holds the work of service/);
      expect(refused.stderr).not.toContain(PG_SECRET);
      for (const command of [
        ['once', '--dry-run'],
        ['redeliver', '100001'],
      ]) {
        const r = await startCli([...command, '-c', w.configFile]).exited;
        expect(r.code, r.stderr).toBe(2);
        expect(r.stderr).toMatch(
          /journal postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/service_change holds the work of service .* \[STARTUP_SERVICE_CHANGED\]/,
        );
        expect(r.stderr).not.toContain(PG_SECRET);
      }
      const doctor = await startCli(['doctor', '-c', w.configFile]).exited;
      expect(doctor.stdout).toMatch(/✗ journal's service: journal postgres:\/\/postgres:\*\*\*@/);
      expect(doctor.stdout + doctor.stderr).not.toContain(PG_SECRET);
    });
  });
});
