// `inbox.dir` changed while a parcel was staged (or placed with a done marker still to write):
// its journalled path lies in the old inbox. Placing it there meant climbing out of the configured
// inbox — refused, and the parcel was deferred at every cycle for good, with a message that read
// like an attack ("refusing a path that climbs out of …"). It now goes into the configured inbox;
// one already placed in the old inbox is confirmed, without a marker written in a folder that is
// no longer the inbox.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '@gridsync/emulator';
import { onceChild } from '../../helpers/daemon-child.js';
import { emulatorParcels, listFiles } from '../../helpers/world.js';

let emu: Emulator;
let dir: string;
beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-inbox-moved-'));
  emu = await startEmulator({ port: 0 });
});
afterEach(async () => {
  await emu.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function config(name: string, inbox: string): string {
  const file = path.join(dir, `${name}.yaml`);
  fs.writeFileSync(
    file,
    [
      `api: { baseUrl: "${emu.url}", apiKey: demo-key-1001 }`,
      `stateDir: ${dir}/state`,
      'log: { level: warn, pretty: false }',
      'mailboxes:',
      '  - mailboxId: 1001',
      `    inbox: ${inbox}`,
      '',
    ].join('\n'),
  );
  return file;
}

describe('inbox.dir changed with a parcel in flight', () => {
  it('a staged parcel goes into the configured inbox, once', async () => {
    await emu.inject({ mailboxId: 1001, fileName: 'orders.x12', content: Buffer.from('ISA*orders~') });
    expect((await onceChild(config('a', `{ dir: ${dir}/in-a }`), 'in.staged:1')).signal).toBe('SIGKILL');
    const r = await onceChild(config('b', `{ dir: ${dir}/in-b }`));
    expect(r.code, r.stderr).toBe(0);
    expect(listFiles(path.join(dir, 'in-b'))).toEqual(['orders.x12']);
    expect(fs.readFileSync(path.join(dir, 'in-b', 'orders.x12'), 'utf8')).toBe('ISA*orders~');
    expect(listFiles(path.join(dir, 'in-a'))).toEqual([]);
    expect((await emulatorParcels(emu, 1001)).map((p) => p.status)).toEqual(['InBoxTransferred']);
  });

  it('a parcel placed in the old inbox before its marker is confirmed, no marker written there', async () => {
    await emu.inject({ mailboxId: 1001, fileName: 'orders.x12', content: Buffer.from('ISA*orders~') });
    expect((await onceChild(config('a', `{ dir: ${dir}/in-a, doneMarker: true }`), 'in.placed:1')).signal).toBe('SIGKILL');
    const r = await onceChild(config('b', `{ dir: ${dir}/in-b, doneMarker: true }`));
    expect(r.code, r.stderr).toBe(0);
    expect(listFiles(path.join(dir, 'in-a'))).toEqual(['orders.x12']);
    expect((await emulatorParcels(emu, 1001)).map((p) => p.status)).toEqual(['InBoxTransferred']);
  });
});
