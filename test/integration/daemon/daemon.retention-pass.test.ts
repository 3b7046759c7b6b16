// When the retention pass runs, from the outside: the built CLI (`run`) against a scripted service
// on 127.0.0.1. Before: `run` pruned at every start, so a daemon restarted often pruned each time.
// Now a pass runs at most once a day (the last one recorded in the journal).
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RETENTION_RECORD_KEY } from '../../../src/daemon/retention-pass.js';
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
