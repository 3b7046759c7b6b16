// One large file dropped in the outbox of a site whose uplink is thin: the upload's body takes
// longer to go out than `api.timeouts.headersMs`. It used to be cut while every byte moved, its
// outcome unknown, searched for and sent again — and cut again, until `once` gave up at its
// drainTimeout (exit 1, "items left undelivered"), nothing sent. The built CLI's `once`, the real
// service (our emulator) behind a proxy that passes the upload on at a set pace; `headersMs`
// shortened to one second so that the body outlasts it in a few seconds instead of minutes.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmulator } from '@gridsync/emulator';
import { GridClient } from '../../../src/api/index.js';
import { startCli } from '../../helpers/daemon-child.js';
import { makeDaemonWorld } from '../../helpers/daemon-config.js';
import { x12 } from '../../helpers/edi.js';
import { startHungProxy } from '../../helpers/hung-proxy.js';

const LINES = 60_000;
/** One interchange of ~1 MB (~1.4 MB on the wire): about five seconds at the proxy's pace. */
const CONTENT = x12(1, Array.from({ length: LINES }, (_, i) => `N1*ST*LINE ${i}`).join('~')).replace('~SE*3*', `~SE*${LINES + 2}*`);

describe('a large file across a thin uplink', () => {
  const cleanups: (() => Promise<unknown> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('is sent once and archived, its body slower than headersMs', async () => {
    const emu = await startEmulator({ port: 0 });
    cleanups.push(() => emu.close());
    const proxy = await startHungProxy(emu.url);
    cleanups.push(() => proxy.close());
    proxy.slowBytesPerSecond = 300_000;
    proxy.rule = (name) => (name === 'POST /v2/parcels/upload' ? 'slow' : undefined);
    const w = makeDaemonWorld({ api: { baseUrl: proxy.url, apiKey: 'demo-key-1001', timeouts: { headersMs: '1s' } } });
    cleanups.push(() => w.cleanup());
    for (const d of [w.outbox, w.sent, w.error, w.inbox]) fs.mkdirSync(d, { recursive: true });
    fs.writeFileSync(path.join(w.outbox, '.catalog.tmp'), CONTENT);
    fs.renameSync(path.join(w.outbox, '.catalog.tmp'), path.join(w.outbox, 'catalog.x12'));
    const since = new Date(Date.now() - 60_000).toISOString();

    const child = startCli(['once', '-c', w.configFile]);
    cleanups.push(() => child.kill('SIGKILL'));
    const r = await child.exited;

    expect(r.code, r.stderr).toBe(0);
    expect(fs.readdirSync(w.error)).toEqual([]);
    expect(fs.readdirSync(w.sent)).toEqual(['catalog.x12']);
    expect(proxy.held.map((h) => h.name)).toEqual(['POST /v2/parcels/upload']);
    const client = new GridClient({ baseUrl: emu.url, auth: { apiKey: 'demo-key-1001' } });
    cleanups.push(() => client.close());
    const uploads = [];
    for await (const p of client.outboxParcels({ mailboxId: 1001, since })) uploads.push([p.fileName, p.bytes]);
    expect(uploads).toEqual([['catalog.x12', CONTENT.length]]);
  }, 90_000);
});
