// Registration (issue 23): `run` makes sure the service holds exactly one callback of ours per
// mailbox — across restarts, after a crash left a duplicate, after the public URL changed — and
// never touches a registration that is not ours. Real emulator process, real daemons.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startDaemon, startWorld, type CallbackWorld } from '../../helpers/callbacks-world.js';

let w: CallbackWorld;
beforeAll(async () => {
  w = await startWorld();
}, 60_000);
afterAll(async () => {
  await w?.close();
});

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
});
