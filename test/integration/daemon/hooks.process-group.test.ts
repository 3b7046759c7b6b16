// Hooks that misbehave with real processes: one that leaves a background process behind, one
// that outlives its timeout with children of its own, and more deliveries than hooks can keep up
// with. A hook counts as done when it exits, its timeout kills its whole process group, and the
// queue of hooks waiting for a slot is bounded.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HookRunner } from '../../../src/daemon/hooks.js';
import { createLogger } from '../../../src/daemon/index.js';
import { EventBus, type PipelineEvents } from '../../../src/events/index.js';
import { eventually } from '../../helpers/daemon-child.js';

/** True while `pid` is a live process (a zombie waiting to be reaped counts as gone). */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

describe('hooks: process groups, exit, timeout and a bounded queue', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  function setup(argv: string[], opts: { timeout?: number; concurrency?: number; maxQueued?: number } = {}) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-hookpg-'));
    const pids = path.join(dir, 'pids');
    const lines: string[] = [];
    const logger = createLogger('debug', false, { write: (s: string) => lines.push(s) } as never);
    const runner = new HookRunner(
      {
        afterReceive: argv,
        timeout: opts.timeout ?? 60_000,
        concurrency: opts.concurrency ?? 1,
        ...(opts.maxQueued ? { maxQueued: opts.maxQueued } : {}),
      },
      logger,
      { ...process.env, HOOK_DIR: dir },
    );
    const events = new EventBus<PipelineEvents>();
    runner.subscribe(events);
    const background = (): number[] =>
      fs.existsSync(pids) ? fs.readFileSync(pids, 'utf8').trim().split('\n').filter(Boolean).map(Number) : [];
    cleanups.push(() => {
      for (const pid of background()) if (alive(pid)) process.kill(pid, 'SIGKILL');
      fs.rmSync(dir, { recursive: true, force: true });
    });
    const deliver = (parcelId: number): void =>
      events.emit('inbound:received', {
        mailbox: 'ours',
        count: 1,
        bytes: 1,
        item: { parcelId, fileName: `${parcelId}.x12`, path: path.join(dir, `${parcelId}.x12`), partner: null },
      });
    const ran = (): string[] =>
      fs.existsSync(path.join(dir, 'ran')) ? fs.readFileSync(path.join(dir, 'ran'), 'utf8').trim().split('\n') : [];
    return { dir, runner, deliver, ran, background, log: () => lines.join('') };
  }

  it('a hook that leaves a background process is done when it exits: the next hooks run and close does not wait', async () => {
    const t = setup(['sh', '-c', 'echo "$GRIDSYNC_HOOK_PARCEL_ID" >> "$HOOK_DIR/ran"; sleep 100 & echo $! >> "$HOOK_DIR/pids"']);
    for (const id of [1, 2, 3]) t.deliver(id);
    await eventually(() => t.ran().length === 3, 10_000, 'all three hooks ran one after the other');
    expect(t.ran()).toEqual(['1', '2', '3']);
    const closing = t.runner.close();
    const closed = await Promise.race([closing.then(() => true), new Promise((r) => setTimeout(() => r(false), 5_000))]);
    expect(closed).toBe(true);
    // A background process of a hook that exited in time is the operator's, not killed.
    expect(t.background().every(alive)).toBe(true);
  });

  it('at the timeout the whole process group is killed and the timeout is logged', async () => {
    const t = setup(['sh', '-c', 'sleep 100 & echo $! >> "$HOOK_DIR/pids"; echo "$GRIDSYNC_HOOK_PARCEL_ID" >> "$HOOK_DIR/ran"; wait'], {
      timeout: 300,
    });
    t.deliver(7);
    t.deliver(8);
    await eventually(() => (t.log().match(/timed out and was killed/g) ?? []).length === 2, 10_000, 'both timeouts logged');
    expect(t.ran()).toEqual(['7', '8']);
    expect(t.background()).toHaveLength(2);
    await eventually(() => !t.background().some(alive), 5_000, 'the background processes killed with their group');
  });

  it('deliveries faster than the hooks: the waiting queue is bounded, each dropped run is logged once with its item', async () => {
    const t = setup(['sh', '-c', 'echo "$GRIDSYNC_HOOK_PARCEL_ID" >> "$HOOK_DIR/ran"; sleep 1'], { maxQueued: 2 });
    for (const id of [1, 2, 3, 4, 5, 6]) t.deliver(id);
    await eventually(() => t.ran().length === 3, 10_000, 'the running hook and the two queued ones ran');
    await t.runner.close();
    expect(t.ran()).toEqual(['1', '2', '3']);
    const dropped = t
      .log()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { msg: string; parcelId?: number; maxQueued?: number })
      .filter((l) => l.msg.includes('too many hooks waiting'));
    expect(dropped.map((l) => l.parcelId)).toEqual([4, 5, 6]);
    expect(dropped.every((l) => l.maxQueued === 2)).toBe(true);
  });
});
