// A journal row `listed` whose download has not begun, for a parcel someone else has taken off the
// pending list since: an older journal backup restored (the parcel was confirmed by us after the
// backup), or another client confirming it while our row sat `listed` after a download that did not
// finish. The pipeline drove every unfinished row by id whatever the list showed, so the parcel was
// downloaded again and placed a second time (`po.x12.<parcelId>…` beside `po.x12`), or placed here
// although another client had it. Now such a row is downloaded only while a complete pending list
// shows it; one a complete list no longer shows ends `taken`, with a warning naming the parcel, and
// a parcel listed again (reset on the service: `gridsync redeliver`) is delivered anew.
// The built CLI (`once`) against its embedded emulator, SQLite journal copied and restored as files.
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { makeDaemonWorld, seedEmbeddedService, type DaemonWorld } from '../../helpers/daemon-config.js';
import { onceChild, runCli } from '../../helpers/daemon-child.js';

const worlds: DaemonWorld[] = [];
afterEach(() => worlds.splice(0).forEach((w) => w.cleanup()));

/** A world with one parcel waiting, and a `once` killed after its download: the journal row is `listed`. */
async function listedRow(): Promise<{ w: DaemonWorld; id: number }> {
  const w = makeDaemonWorld();
  worlds.push(w);
  const {
    ids: [id],
  } = await seedEmbeddedService(w, [{ fileName: 'po.x12', content: 'ISA*po~' }]);
  const crashed = await onceChild(w.configFile, 'in.downloaded:1');
  expect(crashed.signal, crashed.stderr).toBe('SIGKILL');
  expect(fs.readdirSync(w.inbox)).toEqual([]);
  return { w, id: id as number };
}

function journalFiles(w: DaemonWorld): string[] {
  return fs.readdirSync(w.state).filter((f) => f.startsWith('journal.sqlite'));
}

/** `once` exits 0, leaves the inbox as `inbox` and warns once that the parcel was taken elsewhere; `status` counts it. */
function onceTakesNothing(w: DaemonWorld, id: number, inbox: string[]): void {
  const r = runCli(['once', '-c', w.configFile]);
  expect(r.status, r.stderr).toBe(0);
  expect(fs.readdirSync(w.inbox).sort()).toEqual(inbox);
  const taken = r.stdout.split('\n').filter((l) => l.includes('"INBOUND_TAKEN_ELSEWHERE"'));
  expect(taken, r.stdout).toHaveLength(1);
  expect(JSON.parse(taken[0] as string)).toMatchObject({ level: 40, parcelId: id });
  const status = runCli(['status', '-c', w.configFile, '--json']);
  expect(status.status, status.stderr).toBe(0);
  expect(JSON.parse(status.stdout).inbound.counts).toEqual({ taken: 1 });
}

describe('a listed row whose parcel was taken off the pending list by someone else', () => {
  it('an older journal backup restored: the parcel confirmed since is not placed a second time', async () => {
    const { w, id } = await listedRow();
    const backup = path.join(w.dir, 'backup');
    fs.mkdirSync(backup);
    for (const f of journalFiles(w)) fs.copyFileSync(path.join(w.state, f), path.join(backup, f));

    const r = runCli(['once', '-c', w.configFile]);
    expect(r.status, r.stderr).toBe(0);
    expect(fs.readdirSync(w.inbox)).toEqual(['po.x12']);

    for (const f of journalFiles(w)) fs.rmSync(path.join(w.state, f));
    for (const f of fs.readdirSync(backup)) fs.copyFileSync(path.join(backup, f), path.join(w.state, f));
    onceTakesNothing(w, id, ['po.x12']);
    // Nothing left behind in staging.
    expect(fs.readdirSync(path.join(w.state, 'staging'))).toEqual([]);

    // Asked for again on purpose, it is delivered again: a taken row does not stand in the way.
    const again = runCli(['redeliver', '-c', w.configFile, String(id)]);
    expect(again.status, again.stderr).toBe(0);
    expect(runCli(['once', '-c', w.configFile]).status).toBe(0);
    expect(fs.readdirSync(w.inbox).sort()).toHaveLength(2);
    const status = runCli(['status', '-c', w.configFile, '--json']);
    expect(JSON.parse(status.stdout).inbound.counts).toEqual({ confirmed: 1 });
  });

  it('another client confirms the parcel while our row is listed: it is not placed here', async () => {
    const { w, id } = await listedRow();
    const other = runCli(['call', 'POST', '/v2/parcels/confirm', JSON.stringify({ parcelId: id }), '-c', w.configFile]);
    expect(other.status, other.stderr).toBe(0);
    // The forecast says what a run will do with the row.
    const preview = runCli(['once', '--dry-run', '--json', '-c', w.configFile]);
    expect(preview.status, preview.stderr).toBe(0);
    expect(JSON.parse(preview.stdout).mailboxes[0].unfinished).toEqual([
      expect.objectContaining({ item: id, state: 'listed', next: expect.stringMatching(/ends taken if the service shows it confirmed/) }),
    ]);
    onceTakesNothing(w, id, []);
    // A later run does not take it up again either.
    expect(runCli(['once', '-c', w.configFile]).status).toBe(0);
    expect(fs.readdirSync(w.inbox)).toEqual([]);
  });

  it('a list cut short ends no row it does not show: the row waits, and is delivered once a list shows it', async () => {
    const w = makeDaemonWorld();
    worlds.push(w);
    await seedEmbeddedService(w, [
      { fileName: 'a.x12', content: 'ISA*a~' },
      { fileName: 'b.x12', content: 'ISA*b~' },
    ]);
    const crashed = await onceChild(w.configFile, 'in.downloaded:1');
    expect(crashed.signal, crashed.stderr).toBe('SIGKILL');
    // Both rows `listed`; from now on each list shows one parcel, the oldest: b's row is not shown at first.
    const config = YAML.parse(fs.readFileSync(w.configFile, 'utf8')) as { api: Record<string, unknown> };
    config.api.limits = { maxListEntries: 1 };
    fs.writeFileSync(w.configFile, YAML.stringify(config));
    const r = runCli(['once', '-c', w.configFile]);
    expect(r.status, r.stdout).toBe(0);
    expect(fs.readdirSync(w.inbox).sort()).toEqual(['a.x12', 'b.x12']);
    expect(r.stdout).not.toContain('INBOUND_TAKEN_ELSEWHERE');
    const status = runCli(['status', '-c', w.configFile, '--json']);
    expect(JSON.parse(status.stdout).inbound.counts).toEqual({ confirmed: 2 });
  });
});
