// /readyz while a single large parcel crosses a thin line. The freshness window (three polls, at
// least a minute) counted items that stepped forward; one parcel of hundreds of megabytes at a few
// megabytes per second is one item for minutes, and /readyz answered 503 all through a download
// that went at full speed. Bytes still arriving are progress: the download reports them once per
// rate window (`api.limits.rateWindowMs`, the window its minimum rate is measured over); one that
// stops moving is ended by that minimum rate. Uploads need no such report: a continuous outbox
// sends between cycles, and with windows /readyz asks for no freshness.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmulator } from '@gridsync/emulator';
import { eventually } from '../../helpers/daemon-child.js';
import { firstCycleDaemon } from '../../helpers/first-cycle-daemon.js';
import { x12 } from '../../helpers/edi.js';
import { startHungProxy } from '../../helpers/hung-proxy.js';

/** Past the freshness window of `poll: 1s` (one minute). */
const PAST_WINDOW = 61_000;
const LINES = 50_000;
/** One interchange of ~0.85 MB (~1.1 MB on the wire as base64): about five seconds at the proxy's pace. */
const CONTENT = Buffer.from(
  x12(1, Array.from({ length: LINES }, (_, i) => `N1*ST*LINE ${i}`).join('~')).replace('~SE*3*', `~SE*${LINES + 2}*`),
);
const PACE = 220_000;

describe('daemon readiness during one long download', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('stays ready while one large download outlasts the window', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-ready-transfer-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const emu = await startEmulator({ port: 0 });
    cleanups.push(() => emu.close());
    const proxy = await startHungProxy(emu.url);
    cleanups.push(() => proxy.close());
    proxy.slowBytesPerSecond = PACE;
    proxy.rule = (name) => (name === 'POST /v2/parcels/download' ? 'slow' : undefined);
    await emu.inject({ mailboxId: 1001, fileName: 'large.x12', content: CONTENT });
    const inbox = path.join(dir, 'inbox');
    fs.mkdirSync(inbox);
    const { daemon, advance } = await firstCycleDaemon(dir, {
      api: { baseUrl: proxy.url, apiKey: 'demo-key-1001', limits: { rateWindowMs: '500ms' } },
      mailboxes: [{ mailboxId: 1001, inbox: { dir: 'inbox' } }],
    });
    cleanups.push(() => daemon.close());
    const delivered = (): number => fs.readdirSync(inbox).length;
    await daemon.start();
    await eventually(async () => proxy.held.length > 0 || undefined, 20_000, 'the download under way');

    // The window passes in the middle of the download: whatever happened before it is stale.
    advance(PAST_WINDOW);
    await eventually(async () => daemon.readiness().ready || undefined, 20_000, 'ready again while the bytes arrive');
    expect(delivered()).toBe(0); // the same download, still under way
    expect(daemon.readiness().lastSuccessAt).toBeNull();
    expect(daemon.readiness().lastMovedAt).not.toBeNull();

    await eventually(async () => delivered() > 0 || undefined, 60_000, 'the parcel delivered');
    expect(fs.readFileSync(path.join(inbox, 'large.x12')).equals(CONTENT)).toBe(true);
  }, 90_000);
});
