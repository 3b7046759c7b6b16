// A service whose strings are UTF-16 (a .NET or Java one) can cut a name in the middle of a
// surrogate pair and send the half as a JSON escape (`"report\ud83d.edi"`). No file name can hold a
// lone surrogate: the filesystem call writes U+FFFD in its place. Two parcels whose names differed
// only in such halves were given two names in flight, but the disk held one: the second link found
// the first parcel's file there, and when the contents were equal it was taken for the parcel's own
// file — one file in the inbox for two confirmed parcels. A name is now made well-formed first, so
// the two are told apart before either is placed. The built CLI against a scripted service.
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { makeDaemonWorld } from '../../helpers/daemon-config.js';
import { startCli } from '../../helpers/daemon-child.js';
import { startScriptedService } from '../../helpers/scripted-service.js';
import { listFiles } from '../../helpers/world.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('parcel names holding lone UTF-16 surrogates', () => {
  it('two such parcels with the same content are two files in the inbox', async () => {
    const svc = await startScriptedService({ apiKey: 'surrogate-key-7Qx2' });
    cleanups.push(() => svc.close());
    const content = 'ISA*00*same~';
    svc.addInbound('report\ud83d.edi', content);
    svc.addInbound('report\ud83e.edi', content);
    const w = makeDaemonWorld({ api: { baseUrl: svc.url, apiKey: svc.apiKey } }, { outbox: undefined });
    cleanups.push(() => w.cleanup());
    fs.chmodSync(w.configFile, 0o600);

    const r = await startCli(['once', '-c', w.configFile], {}, w.dir).exited;
    expect(r.code, r.stderr).toBe(0);
    expect(svc.confirmed()).toHaveLength(2);
    const files = listFiles(w.inbox);
    expect(files).toHaveLength(2);
    for (const f of files) expect(fs.readFileSync(`${w.inbox}/${f}`, 'utf8')).toBe(content);
    expect(files).toContain('report\ufffd.edi');
  }, 60_000);
});
