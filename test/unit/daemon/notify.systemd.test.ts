// The notifier speaks to systemd through the systemd-notify tool: a stand-in script on PATH
// records the arguments each spawn gets (a real notify socket needs systemd as the receiver).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SystemdNotifier } from '../../../src/daemon/notify.js';
import { silentLogger } from '../../../src/log.js';
import { eventually } from '../../helpers/daemon-child.js';

describe('SystemdNotifier', () => {
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

  function fakeTool() {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-notify-'));
    dirs.push(dir);
    const log = path.join(dir, 'calls.log');
    fs.writeFileSync(path.join(dir, 'systemd-notify'), `#!/bin/sh\necho "$NOTIFY_SOCKET $*" >> "${log}"\n`, { mode: 0o755 });
    const calls = (): string[] => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8').trim().split('\n') : []);
    return { env: { PATH: `${dir}:${process.env.PATH ?? ''}` }, calls };
  }

  it('under systemd: READY with the pid, watchdog pings at half the interval, EXTEND_TIMEOUT, STOPPING', async () => {
    const tool = fakeTool();
    const n = new SystemdNotifier(silentLogger, { ...tool.env, NOTIFY_SOCKET: '/run/test.sock', WATCHDOG_USEC: '2000000' });
    n.extendStart(90_000);
    n.ready();
    await eventually(() => tool.calls().some((c) => c.includes('WATCHDOG=1')), 5000, 'a watchdog ping');
    n.stopping();
    await eventually(() => tool.calls().some((c) => c.includes('STOPPING=1')), 5000, 'STOPPING');
    await new Promise((r) => setTimeout(r, 200)); // a ping spawned just before STOPPING may land after it
    const calls = tool.calls();
    expect(calls).toContain(`/run/test.sock --pid=${process.pid} EXTEND_TIMEOUT_USEC=90000000 --status=waiting for the service`);
    expect(calls).toContain(`/run/test.sock --ready --pid=${process.pid}`);
    expect(calls).toContain(`/run/test.sock --pid=${process.pid} WATCHDOG=1`);
    const pings = calls.filter((c) => c.includes('WATCHDOG=1')).length;
    await new Promise((r) => setTimeout(r, 1200));
    expect(tool.calls().filter((c) => c.includes('WATCHDOG=1')).length).toBe(pings); // stopped with STOPPING
  });

  it('outside systemd (no NOTIFY_SOCKET): spawns nothing', async () => {
    const tool = fakeTool();
    const n = new SystemdNotifier(silentLogger, { ...tool.env, WATCHDOG_USEC: '2000000' });
    n.ready();
    n.extendStart(1000);
    n.stopping();
    await new Promise((r) => setTimeout(r, 300));
    expect(tool.calls()).toEqual([]);
  });
});
