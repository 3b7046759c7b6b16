// Attacks on the inbox from someone who can write to it (the ERP's side): links planted where
// gridsync is about to write, at the moment it writes (a hook on rename wins the race every time).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { InboundPipeline, type InboxConfig } from '../../../src/inbound/index.js';
import { emulatorParcels, inboxConfig, listFiles, makeWorld, type TestWorld } from '../../helpers/world.js';
import { beforeRename, expectHooksFired } from '../../helpers/rename-hook.js';

let w: TestWorld;
let outside: string;
beforeEach(async () => {
  w = await makeWorld();
  outside = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-outside-'));
});
afterEach(async () => {
  vi.restoreAllMocks();
  expectHooksFired();
  await w.close();
  fs.rmSync(outside, { recursive: true, force: true });
});

const pipeline = (over: Partial<InboxConfig> = {}): InboundPipeline =>
  new InboundPipeline({
    client: w.client,
    journal: w.journal,
    mailbox: { mailboxId: 1001, name: 'mb1001', inbox: inboxConfig(w.dirs.inbox, over) },
    stateDir: w.dirs.state,
  });

/** Runs `plant` once, just before gridsync renames a staged download into the inbox. */
function beforePlacement(plant: () => void): void {
  beforeRename('placement of a .part', (from) => from.endsWith('.part'), plant);
}

describe('hostile inbox', () => {
  it('issue 11 #1: a done marker planted as a symlink is never followed: the target is neither truncated nor re-moded', async () => {
    const victim = path.join(outside, 'shadow');
    fs.writeFileSync(victim, 'root:precious\n', { mode: 0o644 });
    await w.emu.inject({ mailboxId: 1001, fileName: 'order.x12', content: Buffer.from('ISA*00~') });
    beforePlacement(() => fs.symlinkSync(victim, path.join(w.dirs.inbox, 'order.x12.done')));
    const p = pipeline({ doneMarker: true, fileMode: 0o600 });
    await p.checkPrerequisites();
    const r = await p.runCycle();
    expect(fs.readFileSync(victim, 'utf8')).toBe('root:precious\n');
    expect(fs.statSync(victim).mode & 0o777).toBe(0o644);
    expect(r).toMatchObject({ placed: 1, confirmed: 1 });
    const marker = fs.lstatSync(path.join(w.dirs.inbox, 'order.x12.done'));
    expect(marker.isFile()).toBe(true);
    expect(marker.mode & 0o777).toBe(0o600);
  });

  it('issue 11 #8: a template sub-folder pre-created as a symlink never carries a parcel out of the inbox', async () => {
    fs.symlinkSync(outside, path.join(w.dirs.inbox, '1001'));
    const id = await w.emu.inject({ mailboxId: 1001, fileName: 'escape.x12', content: Buffer.from('ISA*01~') });
    const p = pipeline({ nameTemplate: '{mailboxId}/{fileName}' });
    await p.checkPrerequisites();
    await p.runCycle();
    expect(fs.readdirSync(outside)).toEqual([]);
    // Not placed, so not confirmed: the parcel waits on the service until the operator fixes the folder.
    expect((await emulatorParcels(w.emu, 1001)).find((x) => x.parcelId === id)?.status).toBe('InBoxReady');
  });

  it('issue 11 #8: a sub-folder swapped for a symlink after it was created is not followed either', async () => {
    await w.emu.inject({ mailboxId: 1001, fileName: 'late.x12', content: Buffer.from('ISA*02~') });
    const sub = path.join(w.dirs.inbox, '1001');
    beforePlacement(() => {
      fs.rmSync(sub, { recursive: true, force: true });
      fs.symlinkSync(outside, sub);
    });
    fs.mkdirSync(sub);
    const p = pipeline({ nameTemplate: '{mailboxId}/{fileName}' });
    await p.checkPrerequisites();
    await p.runCycle();
    expect(fs.readdirSync(outside)).toEqual([]);
  });

  it('bidi and zero-width characters are removed from inbox names', async () => {
    await w.emu.inject({ mailboxId: 1001, fileName: 'invoice\u202Efdp.exe', content: Buffer.from('x') });
    await w.emu.inject({ mailboxId: 1001, fileName: 'pay\u200Bment\uFEFF.x12', content: Buffer.from('y') });
    const p = pipeline();
    await p.checkPrerequisites();
    await p.runCycle();
    expect(listFiles(w.dirs.inbox)).toEqual(['invoicefdp.exe', 'payment.x12']);
  });
});
