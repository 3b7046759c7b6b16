// An outbox read with `readiness: marker` takes a file only once its marker is there. `requeue`
// put a fixed file back without one: it said "requeued" and exited 0, and the file waited in the
// outbox for good. The marker now follows the file.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeDaemonWorld, type DaemonWorld } from '../../helpers/daemon-config.js';
import { runCli } from '../../helpers/daemon-child.js';
import { x12 } from '../../helpers/edi.js';

const worlds: DaemonWorld[] = [];
afterEach(() => worlds.splice(0).forEach((w) => w.cleanup()));

describe('requeue into an outbox read with markers', () => {
  it('writes the marker, so the requeued file is sent', () => {
    const w = makeDaemonWorld(
      {},
      { outbox: { dir: './outbox', sentDir: './sent', errorDir: './error', readiness: 'marker', rescanMs: '500ms' } },
    );
    worlds.push(w);
    fs.mkdirSync(w.outbox, { recursive: true });
    fs.writeFileSync(path.join(w.outbox, 'inv.x12'), '');
    fs.writeFileSync(path.join(w.outbox, 'inv.x12.done'), '');
    expect(runCli(['once', '-c', w.configFile]).status).toBe(1); // empty: errorDir
    expect(fs.readdirSync(w.error).sort()).toEqual(['inv.x12', 'inv.x12.error.json']);
    fs.writeFileSync(path.join(w.error, 'inv.x12'), x12(77)); // the operator fixes the file
    expect(runCli(['requeue', '-c', w.configFile, 'inv.x12']).status).toBe(0);
    expect(fs.readdirSync(w.outbox).sort()).toEqual(['inv.x12', 'inv.x12.done']);
    expect(runCli(['once', '-c', w.configFile]).status).toBe(0);
    expect(fs.readdirSync(w.sent)).toEqual(['inv.x12']);
    expect(fs.readdirSync(w.outbox)).toEqual([]);
  });
});
