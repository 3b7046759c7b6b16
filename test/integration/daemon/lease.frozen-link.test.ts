/**
 * One instance's connections to the shared journal frozen (a TCP proxy on 127.0.0.1 that stops
 * forwarding both ways, the connections left open: a network partition between one host and the
 * database) in the middle of a burst, while the other instance reaches the database directly. The
 * cut-off holder's renewals neither answer nor fail: it must stop acting at its self-fencing
 * deadline, the other takes its mailbox over, and once the link forwards again — its statements
 * held in the proxy delivered late, against a lease that changed hands — nothing is placed, sent or
 * archived twice and nothing is lost. Two `gridsync run` children of the built CLI, the emulator,
 * one real PostgreSQL; `gridsync status` run meanwhile names the instance that took over.
 */
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventually, startCli } from '../../helpers/daemon-child.js';
import { MAILBOX, startHaWorld, type HaInstance } from '../../helpers/ha-world.js';
import { postgresForFile } from '../../helpers/postgres.js';

const server = postgresForFile('a journal link frozen for one instance is not tested');

/** A proxy to 127.0.0.1:`port` whose every connection can be frozen: bytes held, nothing closed. */
async function freezableProxy(port: number): Promise<{ port: number; freeze(on: boolean): void; close(): Promise<void> }> {
  let frozen = false;
  const flushes = new Set<() => void>();
  const sockets = new Set<net.Socket>();
  const proxy = net.createServer((client) => {
    const upstream = net.connect(port, '127.0.0.1');
    const held: [net.Socket, Buffer][] = [];
    const forward = (to: net.Socket) => (chunk: Buffer) => (frozen ? held.push([to, chunk]) : to.write(chunk));
    client.on('data', forward(upstream));
    upstream.on('data', forward(client));
    const flush = (): void => {
      for (const [to, chunk] of held.splice(0)) to.write(chunk);
    };
    flushes.add(flush);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => {
        sockets.delete(s);
        flushes.delete(flush);
        client.destroy();
        upstream.destroy();
      });
    }
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return {
    port: (proxy.address() as net.AddressInfo).port,
    freeze(on) {
      frozen = on;
      if (!on) for (const f of flushes) f();
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => proxy.close(r));
    },
  };
}

const takes = (i: HaInstance): number => i.lines().filter((l) => l.msg === 'mailbox lease taken').length;

describe.skipIf(!server.available)('the journal link of one instance frozen', () => {
  it('its mailbox goes to the other; after the link comes back nothing is doubled or lost', async () => {
    const url = await server.createDatabase('frozen_link');
    const proxy = await freezableProxy(server.port);
    const w = await startHaWorld({ journalUrl: url, instances: 2, leaseMs: 3_000, renewMs: 750 });
    try {
      const [a, b] = w.instances as [HaInstance, HaInstance];
      a.start({ GRIDSYNC_JOURNAL_URL: url.replace(`:${server.port}/`, `:${proxy.port}/`) });
      await eventually(() => takes(a) === 1, 20_000, 'a holds the mailbox');
      b.start();
      await w.burst('one', 6);
      await w.settled(30_000);

      await w.burst('two', 8);
      await new Promise((r) => setTimeout(r, 300)); // a in the middle of it
      proxy.freeze(true);
      await eventually(() => takes(b) > 0, 20_000, 'b takes the mailbox over');
      await w.burst('three', 4);
      await w.settled(40_000);
      // What the operator sees meanwhile from any host: b holds the mailbox, its lease live.
      const status = await startCli(['status', '--json', '-c', path.join(w.dir, 'host-a', 'gridsync.yaml')], { GRIDSYNC_JOURNAL_URL: url })
        .exited;
      const shown = JSON.parse(status.stdout) as { mailboxes: { mailboxId: number; lease: { owner: string | null; live: boolean } }[] };
      expect(shown.mailboxes.map((m) => [m.mailboxId, m.lease.owner, m.lease.live])).toEqual([[MAILBOX, 'host-b', true]]);

      proxy.freeze(false);
      // a hears the database again (the fair share gives it the mailbox back); more traffic.
      await eventually(() => takes(a) > 1, 30_000, 'a holds the mailbox again');
      await w.burst('four', 4);
      await w.settled(40_000);
      const crashes = [...a.lines(), ...b.lines()].filter((l) => l.level === 60 || l.msg === 'internal error');
      expect(crashes).toEqual([]);
      expect(a.running && b.running).toBe(true);
    } finally {
      await w.close();
      await proxy.close();
    }
  }, 180_000);
});
