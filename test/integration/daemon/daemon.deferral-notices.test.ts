// A deferral that lasts many cycles (here: a folder sits where each parcel's file must go, so its
// rename fails every cycle) is warned about once, then summed up in one line per cycle — not one
// warning per parcel per cycle; when the cause is gone one info line says so. The messages name
// the inbox folder as configured, never the descriptor path gridsync resolves names through
// (/proc/self/fd/N). The built daemon runs as a real process against the scripted service.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { eventually, startCli } from '../../helpers/daemon-child.js';
import { makeDaemonWorld } from '../../helpers/daemon-config.js';
import { x12 } from '../../helpers/edi.js';
import { startScriptedService } from '../../helpers/scripted-service.js';

type Line = Record<string, unknown> & { msg: string; level: number };

const lines = (output: string): Line[] =>
  output
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Line);

describe('a deferral lasting several cycles', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('warns once, then one summary per cycle; names the real inbox path; says when it is over', async () => {
    const svc = await startScriptedService();
    cleanups.push(() => svc.close());
    const names = ['a.x12', 'b.x12', 'c.x12'];
    names.forEach((n, i) => svc.addInbound(n, x12(60 + i)));
    const w = makeDaemonWorld(
      { api: { baseUrl: svc.url, protocol: 'rest', apiKey: svc.apiKey }, log: { level: 'info', pretty: false } },
      { inbox: { dir: './inbox', collision: 'overwrite' } },
    );
    cleanups.push(() => w.cleanup());
    const c = YAML.parse(fs.readFileSync(w.configFile, 'utf8'));
    delete c.mailboxes[0].outbox;
    c.schedule = { poll: '300ms' };
    fs.writeFileSync(w.configFile, YAML.stringify(c));
    // A folder under each parcel's name: the rename over it fails (EISDIR) in every cycle.
    for (const n of names) fs.mkdirSync(path.join(w.inbox, n), { recursive: true });

    const child = startCli(['run', '-c', w.configFile], {}, w.dir);
    cleanups.push(() => child.kill('SIGKILL'));
    const summaries = (): Line[] => lines(child.output()).filter((l) => /parcel\(s\) deferred to the next cycle/.test(l.msg));
    await eventually(() => summaries().length >= 3, 60_000, 'three cycles summed up');

    for (const n of names) fs.rmdirSync(path.join(w.inbox, n));
    await eventually(() => svc.confirmed().length === names.length, 60_000, 'the parcels delivered once the folders are gone');
    await eventually(
      () => lines(child.output()).some((l) => l.msg === 'parcels no longer deferred for this reason'),
      30_000,
      'the end of the deferral',
    );
    child.kill('SIGTERM');
    const { stdout, stderr } = await child.exited;
    const all = lines(stdout);

    const warned = all.filter((l) => l.msg === 'parcel deferred to the next cycle');
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatchObject({ level: 40, code: 'INBOUND_DEFERRED' });
    expect(String(warned[0]?.err)).toContain(`${w.inbox}/`);
    for (const s of summaries()) expect(s).toMatchObject({ level: 40, deferred: names.length, byCode: { INBOUND_DEFERRED: names.length } });
    expect(all.find((l) => l.msg === 'parcels no longer deferred for this reason')).toMatchObject({ level: 30, code: 'INBOUND_DEFERRED' });
    expect(stdout + stderr).not.toContain('/proc/self/fd');
    expect(fs.readdirSync(w.inbox).sort()).toEqual(names);
  }, 150_000);
});
