// `gridsync once` as a nightly cron job runs it, from the outside (the built CLI as a child
// process): a "once started" line first in its log; mailboxes drained side by side, proven by a
// scripted service (not our emulator) that sees two mailboxes' pending lists in flight at once,
// and never more than ONCE_MAILBOX_CONCURRENCY; and a service unreachable from the start ends the
// run early with a clear error and exit 1, instead of retrying for once.drainTimeout.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { startCli } from '../../helpers/daemon-child.js';
import { startScriptedService, type ServedRequest } from '../../helpers/scripted-service.js';
import { x12 } from '../../helpers/edi.js';
import { ONCE_MAILBOX_CONCURRENCY } from '../../../src/daemon/index.js';
import { cleanupsOf, type Cleanups } from '../../helpers/test-cleanups.js';

function world(cleanups: Cleanups, config: Record<string, unknown>): { dir: string; configFile: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-nightly-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  const configFile = path.join(dir, 'gridsync.yaml');
  // Mode 0600, as the install guide has it: no warning about a readable secret ahead of the log.
  fs.writeFileSync(configFile, YAML.stringify({ stateDir: './state', log: { level: 'info', pretty: false }, ...config }), { mode: 0o600 });
  return { dir, configFile };
}

/** A port on 127.0.0.1 where nothing listens. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const logLines = (stdout: string): { msg?: string; [k: string]: unknown }[] =>
  stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { msg?: string });

// Side by side: each test runs once against a service of its own (the in-flight counts are per
// service) and mostly waits on its held answers; each cleans up its own (cleanupsOf).
describe.concurrent('gridsync once, as a nightly job', () => {
  it('drains mailboxes side by side, and its log starts with a "once started" line', async (ctx) => {
    const cleanups = cleanupsOf(ctx);
    const svc = await startScriptedService();
    cleanups.push(() => svc.close());
    // Each pending list is held until another one is in flight too (or 2 s pass): mailboxes drained
    // one after another never overlap, so only a concurrent drain sees two at once.
    let inFlight = 0;
    let maxInFlight = 0;
    const held: (() => void)[] = [];
    svc.variants.fault = async (req: ServedRequest, res) => {
      if (req.path !== '/v2/parcels/pending-inbox-list') return false;
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      if (inFlight >= 2) for (const release of held.splice(0)) release();
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 2000);
        held.push(() => (clearTimeout(timer), resolve()));
      });
      inFlight--;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ success: true, data: [], errorCode: '', message: '' }));
      return true;
    };
    const w = world(cleanups, {
      api: { baseUrl: svc.url, apiKey: svc.apiKey },
      mailboxes: [1001, 1002, 1003].map((id) => ({ mailboxId: id, inbox: { dir: `./in-${id}` } })),
    });
    const child = startCli(['once', '-c', w.configFile], {}, w.dir);
    const done = await child.exited;
    expect(done.code, done.stderr).toBe(0);
    expect(maxInFlight).toBeGreaterThanOrEqual(2);
    const lines = logLines(done.stdout);
    expect(lines[0]).toMatchObject({ msg: 'once started', mailboxes: 3, drainTimeoutMs: 300_000 });
    expect(lines[0]?.config).toBe(w.configFile);
  }, 60_000);

  it('drains at most ONCE_MAILBOX_CONCURRENCY mailboxes at a time', async (ctx) => {
    const cleanups = cleanupsOf(ctx);
    const svc = await startScriptedService();
    cleanups.push(() => svc.close());
    // Every pending list is held a while: more mailboxes than the bound all start at once unless
    // the drain bounds them, and a sequential drain never has two in flight.
    let inFlight = 0;
    let maxInFlight = 0;
    svc.variants.fault = async (req: ServedRequest, res) => {
      if (req.path !== '/v2/parcels/pending-inbox-list') return false;
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      inFlight--;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ success: true, data: [], errorCode: '', message: '' }));
      return true;
    };
    const ids = Array.from({ length: ONCE_MAILBOX_CONCURRENCY + 4 }, (_, i) => 1001 + i);
    const w = world(cleanups, {
      api: { baseUrl: svc.url, apiKey: svc.apiKey },
      mailboxes: ids.map((id) => ({ mailboxId: id, inbox: { dir: `./in-${id}` } })),
    });
    const done = await startCli(['once', '-c', w.configFile], {}, w.dir).exited;
    expect(done.code, done.stderr).toBe(0);
    expect(maxInFlight).toBeGreaterThanOrEqual(2);
    expect(maxInFlight).toBeLessThanOrEqual(ONCE_MAILBOX_CONCURRENCY);
  }, 60_000);

  it('a service unreachable from the start ends the run early, with the reason and exit 1', async (ctx) => {
    const cleanups = cleanupsOf(ctx);
    const port = await closedPort();
    const w = world(cleanups, {
      // once.drainTimeout left at its default (5 minutes): the run must not wait it out.
      api: { baseUrl: `http://127.0.0.1:${port}`, apiKey: 'k' },
      mailboxes: [
        { mailboxId: 1001, inbox: { dir: './in' }, outbox: { dir: './out', sentDir: './sent', errorDir: './err', stableMs: 0 } },
        { mailboxId: 1002, inbox: { dir: './in2' } },
      ],
    });
    fs.mkdirSync(path.join(w.dir, 'out'));
    fs.writeFileSync(path.join(w.dir, 'out', 'inv.x12'), x12(7));
    const child = startCli(['once', '-c', w.configFile], {}, w.dir);
    const done = await child.exited;
    expect(done.code).toBe(1);
    expect(done.stderr).toMatch(/the service is not reachable/);
    expect(done.stderr).toContain('[STARTUP_UNREACHABLE]');
    // The file waits in the journal for the next run; nothing went to errorDir.
    expect(done.stderr).toMatch(/inv\.x12: pending/);
    expect(fs.existsSync(path.join(w.dir, 'err')) ? fs.readdirSync(path.join(w.dir, 'err')) : []).toEqual([]);
    expect(logLines(done.stdout).some((l) => l.msg === 'once: work left after a transient failure; another cycle after a pause')).toBe(
      false,
    );
  }, 90_000);
});
