// A config changed while work was in flight: the journal holds a file claimed into processing/
// and a parcel staged, and the new config no longer names the outbox folder or the mailbox's
// inbox. Nothing drives such rows, and `once` exited 0 while the file waited in processing/ for
// good and the parcel stayed on the service until it expired. Now `once` names them (exit 1) and
// `run` logs them at start; with the old config back, a run finishes them — once.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '@gridsync/emulator';
import { onceChild, startCli } from '../../helpers/daemon-child.js';
import { x12 } from '../../helpers/edi.js';
import { emulatorParcels, listFiles } from '../../helpers/world.js';

let emu: Emulator;
let dir: string;
beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-orphans-'));
  emu = await startEmulator({ port: 0, settings: { acknowledgeDelayMs: 60_000 } });
});
afterAll(async () => {
  await emu.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function config(name: string, mailbox: string[]): string {
  const file = path.join(dir, `${name}.yaml`);
  const lines = [`api: { baseUrl: "${emu.url}", apiKey: demo-key-1001 }`, `stateDir: ${dir}/state`, 'log: { level: warn, pretty: false }'];
  fs.writeFileSync(file, [...lines, 'mailboxes:', '  - mailboxId: 1001', ...mailbox.map((l) => `    ${l}`), ''].join('\n'));
  return file;
}

describe('unfinished work the config no longer drives', () => {
  it('is named by once (exit 1) and by run at start, and finished once the old config is back', async () => {
    const outbox = `outbox: { dir: ${dir}/out, sentDir: ${dir}/sent, errorDir: ${dir}/err, stableMs: 20ms }`;
    const inbox = `inbox: { dir: ${dir}/in }`;
    fs.mkdirSync(path.join(dir, 'out'));
    fs.writeFileSync(path.join(dir, 'out', 'inv.x12'), x12(41));
    await new Promise((r) => setTimeout(r, 50));
    await emu.inject({ mailboxId: 1001, fileName: 'orders.x12', content: Buffer.from('ISA*orders~') });
    const before = config('before', [inbox, outbox]);
    // Inbound goes first in a mailbox's drain: killed with the parcel staged, the file not yet claimed.
    expect((await onceChild(before, 'in.staged:1')).signal).toBe('SIGKILL');
    expect((await onceChild(config('outbox-only', [outbox]), 'out.claimed:1')).signal).toBe('SIGKILL');

    // The outbox moved elsewhere and the inbox dropped: both rows are left to nobody.
    const after = config('after', [`outbox: { dir: ${dir}/out2, sentDir: ${dir}/sent, errorDir: ${dir}/err, stableMs: 20ms }`]);
    fs.mkdirSync(path.join(dir, 'out2'));
    const r = await onceChild(after);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/mb1001 outbound inv\.x12: deferred: claimed in the journal .*no configured mailbox 1001 has the outbox/);
    expect(r.stderr).toMatch(
      /mb1001 inbound {2}parcel \d+ \(orders\.x12\): deferred: staged in the journal, but no configured mailbox with an inbox/,
    );
    const run = startCli(['run', '-c', after]);
    await run.waitFor(/unfinished work in the journal that no configured mailbox drives/);
    run.kill('SIGTERM');
    await run.exited;

    const again = await onceChild(before);
    expect(again.code, again.stderr).toBe(0);
    expect(listFiles(path.join(dir, 'sent'))).toEqual(['inv.x12']);
    expect(listFiles(path.join(dir, 'in'))).toEqual(['orders.x12']);
    const parcels = await emulatorParcels(emu, 1001);
    expect(parcels.filter((p) => p.direction === 'out').map((p) => p.fileName)).toEqual(['inv.x12']);
    expect(parcels.filter((p) => p.direction === 'in').map((p) => p.status)).toEqual(['InBoxTransferred']);
  });
});
