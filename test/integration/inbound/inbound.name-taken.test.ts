// The inbox name of a parcel is chosen free, then the staged file is put under it. Whatever the
// ERP writes under that name in between must survive: the placement used a plain rename, which
// replaced the ERP's file and confirmed the parcel. The gap is a moment in a normal cycle (a hook
// right before the placement wins it every time) and whole cycles while the placement is deferred
// (the inbox unusable) or after a crash (the journalled name is reused). With `unique` the parcel
// goes under a free name, with `fail` it waits, with `overwrite` it replaces.
//
// Root ignores directory modes, so the inbox is made unusable by standing a file where its folder
// must be (the placement then fails whoever runs the test).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { InboundPipeline, type InboxConfig } from '../../../src/inbound/index.js';
import { beforeRename, expectHooksFired } from '../../helpers/rename-hook.js';
import { emulatorParcels, inboxConfig, listFiles, makeWorld, type TestWorld } from '../../helpers/world.js';

const sha = (b: Buffer | string): string => createHash('sha256').update(b).digest('hex');
const CONTENT = Buffer.from("UNA:+.? 'UNB+UNOC:3+SENDER+US+260507:0800+1'");
const ERP = "UNA:+.? 'UNB+UNOC:3+US+ERP+260507:0900+7'";

let w: TestWorld;
let staging: string;
beforeEach(async () => {
  w = await makeWorld();
  staging = path.join(w.dirs.state, 'staging');
});
afterEach(async () => {
  vi.restoreAllMocks();
  expectHooksFired();
  await w.close();
});

const pipeline = (over: Partial<InboxConfig> = {}): InboundPipeline =>
  new InboundPipeline({
    client: w.client,
    journal: w.journal,
    mailbox: { mailboxId: 1001, name: 'mb1001', inbox: inboxConfig(w.dirs.inbox, over) },
    stateDir: w.dirs.state,
  });
const status = async (id: number): Promise<unknown> => (await emulatorParcels(w.emu, 1001)).find((x) => x.parcelId === id)?.status;
const inbox = (name: string): string => path.join(w.dirs.inbox, name);
const row = (id: number): { state: string; final_path: string } =>
  w.journal.db.prepare('SELECT state, final_path FROM inbound_parcels WHERE parcel_id = ?').get(id) as {
    state: string;
    final_path: string;
  };

/** A parcel `orders.edi` staged under its journalled name while the inbox is unusable; the inbox back, empty. */
async function stagedWhileInboxUnusable(p: InboundPipeline): Promise<number> {
  const id = await w.emu.inject({ mailboxId: 1001, fileName: 'orders.edi', content: CONTENT });
  await p.checkPrerequisites();
  fs.rmSync(w.dirs.inbox, { recursive: true });
  fs.writeFileSync(w.dirs.inbox, 'not a folder');
  expect(await p.runCycle()).toMatchObject({ placed: 0, confirmed: 0, deferred: 1 });
  expect(row(id)).toEqual({ state: 'staged', final_path: inbox('orders.edi') });
  fs.rmSync(w.dirs.inbox);
  fs.mkdirSync(w.dirs.inbox);
  return id;
}

/** Runs cycles until the parcel is confirmed (at most three). */
async function untilConfirmed(p: InboundPipeline, id: number): Promise<void> {
  for (let cycle = 0; cycle < 3 && (await status(id)) === 'InBoxReady'; cycle++) await p.runCycle();
}

describe('a file written under a parcel’s inbox name before the parcel is placed', () => {
  it('unique: written while the placement was deferred, it is kept; the parcel goes under a free name', async () => {
    const p = pipeline();
    const id = await stagedWhileInboxUnusable(p);
    fs.writeFileSync(inbox('orders.edi'), ERP);

    await untilConfirmed(p, id);
    expect(await status(id)).toBe('InBoxTransferred');
    expect(listFiles(w.dirs.inbox)).toEqual([`orders.${id}.edi`, 'orders.edi']);
    expect(fs.readFileSync(inbox('orders.edi'), 'utf8')).toBe(ERP);
    expect(sha(fs.readFileSync(inbox(`orders.${id}.edi`)))).toBe(sha(CONTENT));
    expect(row(id)).toEqual({ state: 'confirmed', final_path: inbox(`orders.${id}.edi`) });
    expect(listFiles(staging)).toEqual([]);
  });

  it('unique: written the moment before the placement, it is kept; the parcel goes under a free name', async () => {
    const id = await w.emu.inject({ mailboxId: 1001, fileName: 'orders.edi', content: CONTENT });
    beforeRename(
      'placement of a .part',
      (from) => from.endsWith('.part'),
      () => fs.writeFileSync(inbox('orders.edi'), ERP),
    );
    const p = pipeline({ doneMarker: true });
    await p.checkPrerequisites();

    expect(await p.runCycle()).toMatchObject({ placed: 1, confirmed: 1 });
    expect(listFiles(w.dirs.inbox)).toEqual([`orders.${id}.edi`, `orders.${id}.edi.done`, 'orders.edi']);
    expect(fs.readFileSync(inbox('orders.edi'), 'utf8')).toBe(ERP);
    expect(sha(fs.readFileSync(inbox(`orders.${id}.edi`)))).toBe(sha(CONTENT));
    expect(listFiles(staging)).toEqual([]);
  });

  it('fail: written the moment before the placement, it is kept and the parcel waits until the name is free', async () => {
    const id = await w.emu.inject({ mailboxId: 1001, fileName: 'orders.edi', content: CONTENT });
    beforeRename(
      'placement of a .part',
      (from) => from.endsWith('.part'),
      () => fs.writeFileSync(inbox('orders.edi'), ERP),
    );
    const p = pipeline({ collision: 'fail' });
    await p.checkPrerequisites();

    expect(await p.runCycle()).toMatchObject({ placed: 0, confirmed: 0, deferred: 1 });
    expect(listFiles(w.dirs.inbox)).toEqual(['orders.edi']);
    expect(fs.readFileSync(inbox('orders.edi'), 'utf8')).toBe(ERP);
    expect(await status(id)).toBe('InBoxReady');
    expect(w.journal.db.prepare('SELECT state, last_error FROM inbound_parcels WHERE parcel_id = ?').get(id)).toEqual({
      state: 'staged',
      last_error: `${inbox('orders.edi')} already exists (collision policy: fail)`,
    });

    // The operator moves the old file away: the parcel comes under its own name.
    fs.rmSync(inbox('orders.edi'));
    await untilConfirmed(p, id);
    expect(await status(id)).toBe('InBoxTransferred');
    expect(listFiles(w.dirs.inbox)).toEqual(['orders.edi']);
    expect(sha(fs.readFileSync(inbox('orders.edi')))).toBe(sha(CONTENT));
    expect(listFiles(staging)).toEqual([]);
  });

  it('overwrite: written while the placement was deferred, it is replaced by the parcel, as the policy says', async () => {
    const p = pipeline({ collision: 'overwrite' });
    const id = await stagedWhileInboxUnusable(p);
    fs.writeFileSync(inbox('orders.edi'), ERP);

    await untilConfirmed(p, id);
    expect(await status(id)).toBe('InBoxTransferred');
    expect(listFiles(w.dirs.inbox)).toEqual(['orders.edi']);
    expect(sha(fs.readFileSync(inbox('orders.edi')))).toBe(sha(CONTENT));
    expect(listFiles(staging)).toEqual([]);
  });

  it('unique, on a filesystem without hard links: the name is checked before the rename, and the file kept', async () => {
    const p = pipeline();
    const id = await stagedWhileInboxUnusable(p);
    fs.writeFileSync(inbox('orders.edi'), ERP);
    const refused = (): never => {
      throw Object.assign(new Error('operation not permitted, link'), { code: 'EPERM' });
    };
    const links = [vi.spyOn(fs, 'linkSync').mockImplementation(refused), vi.spyOn(fs.promises, 'link').mockImplementation(refused)];

    await untilConfirmed(p, id);
    expect(await status(id)).toBe('InBoxTransferred');
    expect(listFiles(w.dirs.inbox)).toEqual([`orders.${id}.edi`, 'orders.edi']);
    expect(fs.readFileSync(inbox('orders.edi'), 'utf8')).toBe(ERP);
    expect(sha(fs.readFileSync(inbox(`orders.${id}.edi`)))).toBe(sha(CONTENT));
    expect(listFiles(staging)).toEqual([]);
    expect(
      links.some((spy) => spy.mock.calls.length > 0),
      'a link was tried, and refused',
    ).toBe(true);
  });
});

describe('a crash between the link under the final name and the removal of the staging name', () => {
  // What the crash leaves: the staged file under both names, the row still `staged`.
  it.each(['unique', 'fail'] as const)(
    '%s: the parcel is delivered once, under its name, and its staging name removed',
    async (collision) => {
      const p = pipeline({ collision });
      const id = await stagedWhileInboxUnusable(p);
      const parts = listFiles(staging);
      expect(parts).toHaveLength(1);
      fs.linkSync(path.join(staging, parts[0] as string), inbox('orders.edi'));

      await untilConfirmed(p, id);
      expect(await status(id)).toBe('InBoxTransferred');
      expect(listFiles(w.dirs.inbox)).toEqual(['orders.edi']);
      expect(sha(fs.readFileSync(inbox('orders.edi')))).toBe(sha(CONTENT));
      expect(fs.statSync(inbox('orders.edi')).nlink).toBe(1);
      expect(listFiles(staging)).toEqual([]);
      expect(row(id)).toEqual({ state: 'confirmed', final_path: inbox('orders.edi') });
    },
  );

  it('the ERP changed the linked file in place before the restart: it stays the parcel’s one file, not delivered again', async () => {
    const p = pipeline();
    const id = await stagedWhileInboxUnusable(p);
    const part = path.join(staging, listFiles(staging)[0] as string);
    fs.linkSync(part, inbox('orders.edi'));
    fs.appendFileSync(inbox('orders.edi'), "UNZ+1+1'");

    await untilConfirmed(p, id);
    expect(await status(id)).toBe('InBoxTransferred');
    expect(listFiles(w.dirs.inbox)).toEqual(['orders.edi']);
    expect(fs.readFileSync(inbox('orders.edi'), 'utf8')).toBe(`${CONTENT.toString()}UNZ+1+1'`);
    expect(listFiles(staging)).toEqual([]);
  });
});
