// Hostile round 4: a forger holds the callback port's connections. Every socket it opens is cut
// after the handshake and header deadlines (5 s), but it opens another at once, from its own
// address: with all of `callbacks.maxConnections` (256) held, the service's own call was dropped
// by the kernel's accept like any other, and its parcel waited for the next poll.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../../helpers/daemon-child.js';
import { callbackWorldForFile, freePort, inboxFiles, metric, startDaemon, type DaemonHandle } from '../../helpers/callbacks-world.js';

const w = callbackWorldForFile();
let d: DaemonHandle;
let port: number;
beforeAll(async () => {
  port = await freePort();
  d = await startDaemon(w, 'target', { poll: '10m', callbacks: { port } });
  await eventually(async () => (await metric(d, 'gridsync_last_success_timestamp_seconds{mailbox="mb1001"}')) > 0);
}, 90_000);
afterAll(async () => {
  await d?.stop();
});

/** Keeps `count` idle sockets open to the port from 127.0.0.2, opening a new one whenever one is cut. */
function holdSockets(count: number): { opened: () => number; stop: () => void } {
  let stopped = false;
  let opened = 0;
  const open = (): void => {
    if (stopped) return;
    opened++;
    const s = net.connect({ host: '127.0.0.1', port, localAddress: '127.0.0.2' });
    s.on('error', () => undefined);
    s.on('close', () => setTimeout(open, 100));
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  };
  const sockets = new Set<net.Socket>();
  for (let i = 0; i < count; i++) open();
  return {
    opened: () => opened,
    stop: () => {
      stopped = true;
      for (const s of sockets) s.destroy();
    },
  };
}

describe('callbacks: a forger holding the connections', () => {
  it('does not keep the service’s call out: its parcel arrives long before the poll', async () => {
    const forger = holdSockets(300);
    try {
      // Past the first round of deadlines: the forger's sockets were cut once and opened again.
      await new Promise((r) => setTimeout(r, 7_000));
      expect(forger.opened()).toBeGreaterThan(300);
      await w.inject('while-held.x12', 'ISA*held~');
      await eventually(() => inboxFiles(d).includes('while-held.x12'), 20_000, 'the parcel announced while the forger held the port');
    } finally {
      forger.stop();
    }
  }, 120_000);
});
