// A redelivery the operator asked for (`gridsync redeliver`) is expected: the next `once` logs it
// at info ("redelivered on request") and counts it as redelivered, not as new; a reset nobody
// asked for stays a warning (the same parcel reset again, this time on the service alone).
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmulator } from '@gridsync/emulator';
import { makeDaemonWorld, seedEmbeddedService, type DaemonWorld } from '../../helpers/daemon-config.js';
import { runCli } from '../../helpers/daemon-child.js';

type Line = Record<string, unknown> & { msg: string; level: number };

const lines = (output: string): Line[] =>
  output
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Line);

const worlds: DaemonWorld[] = [];
afterEach(() => worlds.splice(0).forEach((w) => w.cleanup()));

describe('a redelivery in the log', () => {
  it('asked for: info and counted as redelivered; not asked for: a warning', async () => {
    const w = makeDaemonWorld({ log: { level: 'info', pretty: false } });
    worlds.push(w);
    const {
      dataFile,
      ids: [id],
    } = await seedEmbeddedService(w, [{ fileName: 'po.x12', content: 'ISA*po~' }], (c) => delete c.mailboxes[0].outbox);
    expect(runCli(['once', '-c', w.configFile], {}, w.dir).status).toBe(0);

    expect(runCli(['redeliver', '-c', w.configFile, String(id)], {}, w.dir).status).toBe(0);
    const asked = runCli(['once', '-c', w.configFile], {}, w.dir);
    expect(asked.status).toBe(0);
    const askedLines = lines(asked.stdout);
    expect(askedLines.find((l) => l.parcelId === id && /redelivered on request/.test(l.msg))).toMatchObject({ level: 30, delivery: 2 });
    expect(askedLines.filter((l) => l.level >= 40)).toEqual([]);
    expect(askedLines.find((l) => l.msg === 'once: done')?.inbound).toMatchObject({ listed: 0, redelivered: 1, confirmed: 1 });

    // The service resets it on its own (no `gridsync redeliver`): unexpected, a warning.
    const emu = await startEmulator({ port: 0, dataFile });
    const reset = await fetch(`${emu.url}/v2/parcels/reset-to-inbox/${id}`, {
      method: 'POST',
      headers: { 'x-api-key': 'demo-key-1001' },
    });
    await emu.close();
    expect(reset.ok).toBe(true);
    const unasked = lines(runCli(['once', '-c', w.configFile], {}, w.dir).stdout);
    expect(unasked.find((l) => l.parcelId === id && l.delivery === 3)).toMatchObject({
      level: 40,
      msg: expect.stringMatching(/reset on the service after we confirmed it/),
    });
    expect(fs.readdirSync(w.inbox)).toHaveLength(3);
  }, 120_000);
});
