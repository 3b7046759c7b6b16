// `gridsync redeliver PARCELID`: the service puts the parcel back, the next cycle delivers it again
// under a name of its own (the first copy untouched); an id the service refuses exits 1 with why.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeDaemonWorld, seedEmbeddedService, type DaemonWorld } from '../../helpers/daemon-config.js';
import { runCli } from '../../helpers/daemon-child.js';

const worlds: DaemonWorld[] = [];
afterEach(() => worlds.splice(0).forEach((w) => w.cleanup()));

describe.each(['rest', 'soap'])('redeliver over %s', (protocol) => {
  it('a received parcel comes again under a new name; an unknown id exits 1', async () => {
    const w = makeDaemonWorld();
    worlds.push(w);
    const {
      ids: [id],
    } = await seedEmbeddedService(w, [{ fileName: 'po.x12', content: 'ISA*po~' }], (c) => (c.api.protocol = protocol));
    expect(runCli(['once', '-c', w.configFile]).status).toBe(0);
    expect(fs.readdirSync(w.inbox)).toEqual(['po.x12']);

    const r = runCli(['redeliver', '-c', w.configFile, String(id)]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`parcel ${id}: reset on the service`));
    expect(runCli(['once', '-c', w.configFile]).status).toBe(0);
    const files = fs.readdirSync(w.inbox).sort();
    expect(files).toHaveLength(2);
    expect(files).toContain('po.x12');
    for (const f of files) expect(fs.readFileSync(path.join(w.inbox, f), 'utf8')).toBe('ISA*po~');

    const unknown = runCli(['redeliver', '-c', w.configFile, '987654321']);
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toMatch(/parcel 987654321: not reset — \w+/);
    expect(runCli(['redeliver', '-c', w.configFile, 'abc']).status).toBe(2);
  });
});
