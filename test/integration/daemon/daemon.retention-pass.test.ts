// When the retention pass runs, from the outside: the built CLI (`run` and `once`) against a
// scripted service on 127.0.0.1 whose `Date` header can be set off. Before: `run` pruned at every
// start, so a daemon restarted often pruned each time; and the pass measured ages on our clock
// alone, so a host whose clock was far ahead (a dead RTC battery before NTP) deleted archives early.
// Now a pass runs at most once a day (the last one recorded in the journal), and only while our
// clock agrees with the service's; without any dated answer it waits for the next check.
import fs from 'node:fs';
import path from 'node:path';
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { RETENTION_CLOCK_TOLERANCE_MS, RETENTION_RECORD_KEY } from '../../../src/daemon/retention-pass.js';
import { Journal } from '../../../src/journal/index.js';
import { startCli, type CliChild } from '../../helpers/daemon-child.js';
import { makeDaemonWorld, type DaemonWorld } from '../../helpers/daemon-config.js';
import { startScriptedService, type ScriptedService } from '../../helpers/scripted-service.js';

const DAY = 86_400_000;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function service(): Promise<ScriptedService> {
  const svc = await startScriptedService({ apiKey: 'retention-pass-key-9Kd3' });
  cleanups.push(() => svc.close());
  return svc;
}

function world(svc: ScriptedService, level = 'info'): DaemonWorld {
  const w = makeDaemonWorld(
    { api: { baseUrl: svc.url, protocol: 'rest', apiKey: svc.apiKey }, log: { level, pretty: false } },
    {
      outbox: { dir: './outbox', sentDir: './sent', errorDir: './error', stableMs: '100ms', rescanMs: '500ms', sentRetentionDays: 30 },
    },
  );
  cleanups.push(() => w.cleanup());
  for (const d of [w.inbox, w.outbox, w.sent, w.error]) fs.mkdirSync(d, { recursive: true });
  return w;
}

/** A file in sentDir last written `days` ago. */
function archived(w: DaemonWorld, name: string, days: number): string {
  const p = path.join(w.sent, name);
  fs.writeFileSync(p, 'x');
  const t = new Date(Date.now() - days * DAY);
  fs.utimesSync(p, t, t);
  return p;
}

const logLines = (text: string): { msg?: string; level?: number; [k: string]: unknown }[] =>
  text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { msg?: string });

/** `gridsync run` until it logs `line`, then SIGTERM; its log. */
async function runUntil(w: DaemonWorld, line: RegExp): Promise<string> {
  const child: CliChild = startCli(['run', '-c', w.configFile], {}, w.dir);
  cleanups.push(() => child.kill('SIGKILL'));
  await child.waitFor(line);
  child.kill('SIGTERM');
  const exit = await child.exited;
  expect(exit.code, exit.stderr).toBe(0);
  return child.output();
}

const once = (w: DaemonWorld) => startCli(['once', '-c', w.configFile], {}, w.dir).exited;

const CLOCKS_DISAGREE = "retention skipped: this host's clock and the service's disagree; nothing deleted until they agree (check NTP)";

describe('retention is not run again at every start of run', () => {
  it('a run started within a day of the last pass leaves old files for the next one', async () => {
    const svc = await service();
    const w = world(svc, 'debug');
    fs.mkdirSync(w.state);
    const j = Journal.open(path.join(w.state, 'journal.sqlite'));
    await j.setMeta(RETENTION_RECORD_KEY, new Date(Date.now() - 3_600_000).toISOString());
    await j.close();
    const old = archived(w, 'old.x12', 40);
    const log = await runUntil(w, /"msg":"retention: (not due yet|old files deleted)"/);
    expect(fs.existsSync(old)).toBe(true);
    expect(log).toContain('"msg":"retention: not due yet"');
  });

  it('a run records its pass: started again, it leaves old files for the next one', async () => {
    const svc = await service();
    const w = world(svc, 'debug');
    archived(w, 'first.x12', 40);
    const first = await runUntil(w, /"msg":"retention: pass complete"/);
    expect(first).toContain('"msg":"retention: old files deleted"');
    expect(fs.readdirSync(w.sent)).toEqual([]);

    const second = archived(w, 'second.x12', 40);
    await runUntil(w, /"msg":"retention: (not due yet|old files deleted)"/);
    expect(fs.existsSync(second)).toBe(true);
  });
});

describe("retention waits for our clock to agree with the service's", () => {
  it('a run on a host whose clock is a year ahead of the service deletes nothing, and says why', async () => {
    const svc = await service();
    svc.variants.clockOffsetMs = -365 * DAY;
    const w = world(svc);
    const old = archived(w, 'old.x12', 40);
    const log = await runUntil(w, new RegExp(`"msg":"(${CLOCKS_DISAGREE.replace(/[()]/g, '\\$&')}|retention: pass complete)"`));
    expect(fs.existsSync(old)).toBe(true);
    const warn = logLines(log).find((l) => l.msg === CLOCKS_DISAGREE);
    expect(warn).toMatchObject({ level: 40, toleranceMs: RETENTION_CLOCK_TOLERANCE_MS });
    expect(Math.abs(Number(warn?.offsetMs) + 365 * DAY)).toBeLessThan(60_000);
    expect(Date.parse(String(warn?.localTime)) - Date.parse(String(warn?.serviceTime))).toBe(-Number(warn?.offsetMs));
  });

  it.each([
    ['ahead of', -365 * DAY],
    ['behind', 365 * DAY],
  ])('once on a host whose clock is a year %s the service keeps old files', async (_how, offset) => {
    const svc = await service();
    svc.variants.clockOffsetMs = offset;
    const w = world(svc);
    const old = archived(w, 'old.x12', 40);
    const r = await once(w);
    expect(r.code, r.stderr).toBe(0);
    expect(fs.existsSync(old)).toBe(true);
    expect(logLines(r.stdout).filter((l) => l.msg === CLOCKS_DISAGREE)).toHaveLength(1);
  });

  it('with the clocks agreeing, the same old file goes', async () => {
    const svc = await service();
    const w = world(svc);
    const old = archived(w, 'old.x12', 40);
    const r = await once(w);
    expect(r.code, r.stderr).toBe(0);
    expect(fs.existsSync(old)).toBe(false);
    expect(r.stdout).not.toContain(CLOCKS_DISAGREE);
  });

  it("answers without a Date header: the pass waits for one that shows the service's clock", async () => {
    const svc = await service();
    svc.variants.fault = (_req, res: ServerResponse) => {
      res.sendDate = false;
      const writeHead = res.writeHead.bind(res) as (status: number, headers: Record<string, string>) => ServerResponse;
      (res as unknown as { writeHead: typeof writeHead }).writeHead = (status, headers) => {
        const { date: _date, ...rest } = headers;
        return writeHead(status, rest);
      };
      return false;
    };
    const w = world(svc);
    const old = archived(w, 'old.x12', 40);
    const r = await once(w);
    expect(r.code, r.stderr).toBe(0);
    expect(fs.existsSync(old)).toBe(true);
    expect(logLines(r.stdout).map((l) => l.msg)).toContain('retention: skipped, no answer of the service has shown its clock yet');
  });
});
