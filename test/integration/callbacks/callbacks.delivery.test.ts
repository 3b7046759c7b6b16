// Callbacks as a hint, polling as the safety net (issue 23): a real emulator process calls a real
// `gridsync run` over TLS (self-signed). With callbacks a parcel arrives long before the next
// poll; without them it waits for the poll. Dropped, duplicated, delayed and reordered calls lose
// nothing and place nothing twice; parcels found by a poll unannounced are counted as missed.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, type TestContext } from 'vitest';
import { eventually, runCli } from '../../helpers/daemon-child.js';
import { freePort, inboxFiles, metric, startDaemon, startWorld, type CallbackWorld } from '../../helpers/callbacks-world.js';

/**
 * A world (emulator process, certificate) of the test's own: the tests run side by side — each
 * mostly waits on polls and the announcement grace — and two of them set the emulator's faults.
 */
async function worldOf(ctx: TestContext): Promise<CallbackWorld> {
  const w = await startWorld();
  ctx.onTestFinished(() => w.close());
  return w;
}

describe.concurrent('callbacks: delivery', () => {
  it('with callbacks a parcel reaches the inbox long before the next poll; without, it waits for the poll', async (ctx) => {
    const w = await worldOf(ctx);
    const on = await startDaemon(w, 'on', { poll: '10m', callbacks: { port: await freePort() } });
    const off = await startDaemon(w, 'off', { poll: '10m', callbacks: false, mailboxId: 1002 });
    try {
      // Both have done their start-up poll once they are up; from now on only a callback can bring a parcel in.
      await eventually(async () => (await metric(on, 'gridsync_last_success_timestamp_seconds{mailbox="mb1001"}')) > 0);
      await eventually(async () => (await metric(off, 'gridsync_last_success_timestamp_seconds{mailbox="mb1002"}')) > 0);
      await w.inject('hinted.x12', 'ISA*hinted~', 1001);
      await w.inject('polled.x12', 'ISA*polled~', 1002);
      await eventually(() => inboxFiles(on).includes('hinted.x12'), 15_000, 'the callback-triggered arrival');
      expect(fs.readFileSync(path.join(on.inbox, 'hinted.x12'), 'utf8')).toBe('ISA*hinted~');
      expect(await metric(on, 'gridsync_callbacks_received_total{mailbox="mb1001"}')).toBeGreaterThanOrEqual(1);
      expect(await metric(on, 'gridsync_callbacks_missed_total{mailbox="mb1001"}')).toBe(0);
      // The polling daemon has had as long as the other one needed, and more: still nothing until its poll.
      await new Promise((r) => setTimeout(r, 1500));
      expect(inboxFiles(off)).toEqual([]);
    } finally {
      await on.stop();
      await off.stop();
    }
  }, 90_000);

  it('dropped, duplicated, delayed and reordered calls lose nothing and place nothing twice; misses are counted', async (ctx) => {
    const w = await worldOf(ctx);
    await w.faults([{ endpoint: 'callbacks.deliver', dropRate: 0.3, duplicateRate: 0.4, latencyMs: [0, 1500] }], 11);
    const d = await startDaemon(w, 'faulty', { poll: '3s', callbacks: { port: await freePort() } });
    try {
      const n = 16;
      const names = Array.from({ length: n }, (_, i) => `f${String(i).padStart(2, '0')}.x12`);
      for (const name of names) await w.inject(name, `ISA*${name}~`);
      await eventually(() => inboxFiles(d).length >= n, 45_000, 'every parcel placed');
      // A while longer: late duplicates and retries must not place anything again.
      await new Promise((r) => setTimeout(r, 2500));
      expect(inboxFiles(d).sort()).toEqual(names);
      for (const name of names) expect(fs.readFileSync(path.join(d.inbox, name), 'utf8')).toBe(`ISA*${name}~`);
      const parcels = (await w.emu('GET', '/_emulator/parcels?mailboxId=1001')).data as { fileName: string; status: string }[];
      for (const name of names) expect(parcels.find((p) => p.fileName === name)?.status).toBe('InBoxTransferred');
      const { injected } = (await w.emu('GET', '/_emulator/faults')).data as { injected: Record<string, number> };
      expect(injected.drop).toBeGreaterThan(0);
      expect(injected.duplicate).toBeGreaterThan(0);
      // Calls that never came: those parcels were found by polls (or by cycles for other calls) and count as missed.
      await eventually(async () => (await metric(d, 'gridsync_callbacks_missed_total{mailbox="mb1001"}')) > 0, 20_000, 'missed');
    } finally {
      await w.faults([]);
      await d.stop();
    }
  }, 120_000);

  it('when the calls stop arriving, polls still take every parcel and /readyz says the calls are missed', async (ctx) => {
    const w = await worldOf(ctx);
    await w.faults([{ endpoint: 'callbacks.deliver', dropRate: 1 }], 3);
    const d = await startDaemon(w, 'swallowed', { poll: '1s', callbacks: { port: await freePort() }, httpPort: await freePort() });
    try {
      for (const name of ['s1.x12', 's2.x12', 's3.x12']) await w.inject(name, `ISA*${name}~`);
      await eventually(() => inboxFiles(d).length === 3, 20_000, 'the polls placing every parcel');
      const ready = await eventually(
        async () => {
          const r = (await (await fetch(`${d.metricsUrl}/readyz`)).json()) as {
            ready: boolean;
            callbacks?: { warning: string | null; missed: number };
          };
          return r.callbacks?.warning ? r : undefined;
        },
        25_000,
        'the readiness warning',
      );
      expect(ready.ready).toBe(true);
      expect(ready.callbacks?.missed).toBeGreaterThanOrEqual(3);
      expect(ready.callbacks?.warning).toMatch(/no callback announced/);
      expect(await metric(d, 'gridsync_callbacks_received_total{mailbox="mb1001"}')).toBe(0);
      // doctor says so too.
      const doctor = runCli(['doctor', '-c', path.join(w.dir, 'swallowed', 'gridsync.yaml')]);
      expect(doctor.stdout).toMatch(/callbacks https:\/\/127\.0\.0\.1:\d+\/gridsync\/callbacks.*no callback announced/);
    } finally {
      await w.faults([]);
      await d.stop();
    }
  }, 90_000);
});
