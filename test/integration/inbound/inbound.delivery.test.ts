import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InboundPipeline, type InboxConfig } from '../../../src/inbound/index.js';
import { InboundJournal } from '../../../src/journal/index.js';
import { emulatorParcels, inboxConfig, listFiles, makeWorld, type Protocol, type TestWorld } from '../../helpers/world.js';

const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

let w: TestWorld;

const pipeline = (over: Partial<InboxConfig> = {}): InboundPipeline =>
  new InboundPipeline({
    client: w.client,
    journal: w.journal,
    mailbox: { mailboxId: 1001, name: 'mb1001', inbox: inboxConfig(w.dirs.inbox, { concurrency: 8, ...over }) },
    stateDir: w.dirs.state,
  });

// The same behaviour over both service interfaces (same journal, same guarantees).
describe.each(['rest', 'soap'] as Protocol[])('inbound pipeline against the emulator over %s', (protocol) => {
  beforeEach(async () => {
    w = await makeWorld({}, 'demo-key-1001', protocol);
  });
  afterEach(async () => w.close());

  it('delivers many parcels with random content byte-identical, each exactly once, and confirms them', async () => {
    const sent = new Map<number, string>();
    for (let i = 0; i < 60; i++) {
      const content = randomBytes(i === 0 ? 0 : 1 + ((i * 7919) % 50_000));
      sent.set(await w.emu.inject({ mailboxId: 1001, fileName: i % 3 === 0 ? 'same-name.x12' : `f${i}.edi`, content }), sha(content));
    }
    const p = pipeline();
    await p.checkPrerequisites();
    const r = await p.runCycle();
    expect(r).toMatchObject({ listed: 60, placed: 60, confirmed: 60, failed: 0 });
    const files = listFiles(w.dirs.inbox);
    expect(files).toHaveLength(60);
    const got = files.map((f) => sha(fs.readFileSync(path.join(w.dirs.inbox, f)))).sort();
    expect(got).toEqual([...sent.values()].sort());
    const parcels = await emulatorParcels(w.emu, 1001);
    expect(parcels.every((x) => x.status === 'InBoxTransferred')).toBe(true);
    expect(await p.runCycle()).toMatchObject({ listed: 0, placed: 0, confirmed: 0 });
    expect(listFiles(w.dirs.inbox)).toHaveLength(60);
    expect(listFiles(path.join(w.dirs.state, 'staging'))).toEqual([]);
  });

  it('soak: parcels with the same name downloaded in parallel never share a final name (nul.txt was overwritten)', async () => {
    const shas = [];
    for (let i = 0; i < 40; i++) {
      const content = Buffer.alloc(4096, i);
      shas.push(sha(content));
      await w.emu.inject({ mailboxId: 1001, fileName: 'nul.txt', content });
    }
    const r = await pipeline({ concurrency: 8, doneMarker: true }).runCycle();
    expect(r.confirmed).toBe(40);
    const files = listFiles(w.dirs.inbox).filter((f) => !f.endsWith('.done'));
    expect(files).toHaveLength(40);
    expect(files.map((f) => sha(fs.readFileSync(path.join(w.dirs.inbox, f)))).sort()).toEqual(shas.sort());
  });

  it('keeps hostile names inside the inbox root, with room for unique tags and done markers (soak: ENAMETOOLONG)', async () => {
    const names = [
      '../../escape.x12',
      '/etc/passwd',
      'a\\b.edi',
      'CON',
      'nul.txt',
      'line\nbreak.x12',
      'x'.repeat(300) + '.x12',
      '',
      '..',
      '.hidden',
      'Ünïcödé.edi',
    ];
    for (const fileName of names)
      await w.emu.inject({ mailboxId: 1001, fileName, content: Buffer.from(`data for ${JSON.stringify(fileName)}`) });
    await w.emu.inject({ mailboxId: 1001, fileName: names[6] as string, content: Buffer.from('the same long name again') });
    const r = await pipeline({ doneMarker: true }).runCycle();
    expect(w.journal.db.prepare('SELECT last_error FROM inbound_parcels WHERE last_error IS NOT NULL').all()).toEqual([]);
    expect(r.confirmed).toBe(names.length + 1);
    const files = listFiles(w.dirs.inbox);
    expect(files.filter((f) => f.endsWith('.done'))).toHaveLength(names.length + 1);
    expect(files).toHaveLength(2 * (names.length + 1));
    for (const f of files) {
      expect(f.includes('/')).toBe(false);
      expect(f).not.toMatch(/[\u0000-\u001f]/);
      expect(Buffer.byteLength(f)).toBeLessThanOrEqual(255);
      expect(f.toUpperCase()).not.toBe('CON');
    }
    expect(fs.existsSync(path.join(w.root, 'escape.x12'))).toBe(false);
  });

  it('never places or confirms a truncated body or a wrong byte count; retries, then marks the parcel failed', async () => {
    const id = await w.emu.inject({ mailboxId: 1001, fileName: 'bad.x12', content: randomBytes(20_000) });
    w.emu.setFaults({ seed: 3, rules: [{ endpoint: 'parcels.download', truncateRate: 0.5, wrongBytesRate: 1 }] });
    const p = pipeline();
    for (let i = 0; i < 3; i++) await p.runCycle();
    expect(listFiles(w.dirs.inbox)).toEqual([]);
    const row = await new InboundJournal(w.journal).get(1001, id);
    expect(row?.state).toBe('failed');
    expect(row?.last_error).toMatch(/byte-mismatch|truncated/);
    expect((await emulatorParcels(w.emu, 1001))[0]?.status).toBe('InBoxReady');
    expect(listFiles(path.join(w.dirs.state, 'staging'))).toEqual([]);
  });

  it('confirms after a lost confirm answer without placing the parcel twice', async () => {
    await w.emu.inject({ mailboxId: 1001, fileName: 'once.x12', content: Buffer.from('exactly once') });
    w.emu.setFaults({ seed: 1, rules: [{ endpoint: 'parcels.confirm', resetAfterRate: 1 }] });
    const p = pipeline();
    const first = await p.runCycle();
    expect(first).toMatchObject({ placed: 1, confirmed: 0 });
    expect((await emulatorParcels(w.emu, 1001))[0]?.status).toBe('InBoxTransferred');
    w.emu.setFaults({ rules: [] });
    const second = await p.runCycle();
    expect(second).toMatchObject({ placed: 0, confirmed: 1 });
    expect(listFiles(w.dirs.inbox)).toEqual(['once.x12']);
  });

  it('delivers a parcel reset on the service again under a new name, and writes done markers after the file', async () => {
    const id = await w.emu.inject({ mailboxId: 1001, fileName: 'again.x12', content: Buffer.from('v1') });
    const p = pipeline({ doneMarker: true, fileMode: 0o640 });
    await p.runCycle();
    const reset = await fetch(`${w.emu.url}/v2/parcels/reset-to-inbox/${id}`, {
      method: 'POST',
      headers: { 'x-api-key': 'demo-key-1001' },
    });
    expect(reset.status).toBe(200);
    const r = await p.runCycle();
    expect(r.redelivered).toBe(1);
    expect(listFiles(w.dirs.inbox)).toEqual([`again.${id}-2.x12`, `again.${id}-2.x12.done`, 'again.x12', 'again.x12.done'].sort());
    expect(fs.statSync(path.join(w.dirs.inbox, 'again.x12')).mode & 0o777).toBe(0o640);
  });
});
