// Registration (issue 23): `run` makes sure the service holds exactly one callback of ours per
// mailbox — across restarts, after a crash left a duplicate, after the public URL changed — and
// never touches a registration that is not ours. Real emulator process, real daemons.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort, startDaemon, callbackWorldForFile, writeConfig } from '../../helpers/callbacks-world.js';
import { runCli } from '../../helpers/daemon-child.js';

const w = callbackWorldForFile();

interface Entry {
  callbackId: number;
  url: string;
  mailboxId: number | null;
}

async function registrations(): Promise<Entry[]> {
  const r = await w.emu('POST', '/v2/callbacks/queue-list', { mailboxId: 1001, recordsPerPage: 500 });
  return (r.data as { queueEntries: Entry[] }).queueEntries;
}

describe('callbacks: registration', () => {
  it('is idempotent across restarts, removes its own duplicates, follows a URL change, leaves others alone', async () => {
    const foreign = await w.emu('POST', '/v2/callbacks/create', { url: 'https://erp.example/hook', event: 'Parcel', mailboxId: 1001 });
    expect(foreign.status).toBe(200);
    const port = await freePort();
    const first = await startDaemon(w, 'reg', { poll: '10m', callbacks: { port } });
    await first.stop();
    const secret = (
      JSON.parse(fs.readFileSync(path.join(w.dir, 'reg', 'state', 'callbacks.json'), 'utf8')) as { paths: Record<string, string> }
    ).paths['1001'];
    expect(fs.statSync(path.join(w.dir, 'reg', 'state', 'callbacks.json')).mode & 0o777).toBe(0o600);
    const ours = (list: Entry[]): Entry[] => list.filter((e) => e.url.endsWith(`/1001/${secret}`));
    const afterFirst = ours(await registrations());
    expect(afterFirst).toHaveLength(1);
    expect(afterFirst[0]?.url).toBe(`https://127.0.0.1:${port}/gridsync/callbacks/1001/${secret}`);

    // A restart: the same registration, nothing added.
    const second = await startDaemon(w, 'reg', { poll: '10m', callbacks: { port } });
    await second.stop();
    expect(ours(await registrations()).map((e) => e.callbackId)).toEqual([afterFirst[0]?.callbackId]);

    // A duplicate of ours (a crash between create and its answer): removed at the next start.
    await w.emu('POST', '/v2/callbacks/create', { url: afterFirst[0]?.url, event: 'Parcel', mailboxId: 1001 });
    expect(ours(await registrations())).toHaveLength(2);
    const third = await startDaemon(w, 'reg', { poll: '10m', callbacks: { port } });
    await third.stop();
    expect(ours(await registrations()).map((e) => e.callbackId)).toEqual([afterFirst[0]?.callbackId]);

    // The public URL changes: the same registration now calls the new address.
    const moved = `https://127.0.0.1:${port}/moved/cb`;
    const fourth = await startDaemon(w, 'reg', { poll: '10m', callbacks: { port, publicUrl: moved } });
    await fourth.stop();
    const afterMove = ours(await registrations());
    expect(afterMove.map((e) => [e.callbackId, e.url])).toEqual([[afterFirst[0]?.callbackId, `${moved}/1001/${secret}`]]);

    // Not ours: untouched throughout.
    const all = await registrations();
    expect(all.filter((e) => e.url === 'https://erp.example/hook')).toHaveLength(1);
    expect(all).toHaveLength(2);
  }, 120_000);

  it('gridsync callbacks register, list, test (with and without the daemon) and remove', async () => {
    const port = await freePort();
    const file = writeConfig(w, 'cli', { poll: '10m', callbacks: { port } });
    const register = runCli(['callbacks', 'register', '-c', file]);
    expect(register.stderr).toBe('');
    expect(register.stdout).toMatch(/^mailbox 1001: callback \d+ created$/m);
    const again = runCli(['callbacks', 'register', '-c', file]);
    expect(again.stdout).toMatch(/^mailbox 1001: callback \d+ kept$/m);
    const secret = (
      JSON.parse(fs.readFileSync(path.join(w.dir, 'cli', 'state', 'callbacks.json'), 'utf8')) as { paths: Record<string, string> }
    ).paths['1001'] as string;
    const list = runCli(['callbacks', 'list', '-c', file]);
    expect(list.status).toBe(0);
    expect(list.stdout).toMatch(/ours .*\/1001\/<secret>/);
    expect(list.stdout).not.toContain(secret);

    // No daemon: the command listens itself and sees the service's call arrive.
    const alone = runCli(['callbacks', 'test', '-c', file]);
    expect(alone.stderr).toBe('');
    expect(alone.stdout).toMatch(/the call arrived and was verified/);
    expect(alone.status).toBe(0);
    // With the daemon running, its receiver answers the call.
    const d = await startDaemon(w, 'cli', { poll: '10m', callbacks: { port } });
    try {
      const beside = runCli(['callbacks', 'test', '-c', file]);
      expect(beside.stdout).toMatch(/the running daemon's receiver verified the call/);
      expect(beside.status).toBe(0);
    } finally {
      await d.stop();
    }

    const remove = runCli(['callbacks', 'remove', '-c', file]);
    expect(remove.stdout).toMatch(/^mailbox 1001: removed \d+$/m);
    expect(runCli(['callbacks', 'list', '-c', file]).stdout).not.toMatch(/ours/);
    const test = runCli(['callbacks', 'test', '-c', file]);
    expect(test.status).toBe(1);
    expect(test.stderr).toMatch(/not registered/);
  }, 120_000);
});
