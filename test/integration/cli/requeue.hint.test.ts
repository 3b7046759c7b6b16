// The requeue hint in NAME.error.json is the command to type: it names the config with -c
// (without it, requeue looked for another config and did not find the file).
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeDaemonWorld, type DaemonWorld } from '../../helpers/daemon-config.js';
import { runCli } from '../../helpers/daemon-child.js';

const worlds: DaemonWorld[] = [];
afterEach(() => worlds.splice(0).forEach((w) => w.cleanup()));

describe('error report requeue hint', () => {
  it('names -c CONFIG, and the command works as written from another directory', () => {
    const w = makeDaemonWorld();
    worlds.push(w);
    fs.mkdirSync(w.outbox, { recursive: true });
    fs.writeFileSync(path.join(w.outbox, 'bad.x12'), 'not an interchange');
    expect(runCli(['once', '-c', w.configFile]).status).toBe(1);
    const report = JSON.parse(fs.readFileSync(path.join(w.error, 'bad.x12.error.json'), 'utf8')) as { requeue: string };
    expect(report.requeue).toBe(`gridsync requeue -c ${w.configFile} ${path.join(w.error, 'bad.x12')}`);
    const [, ...args] = report.requeue.split(' ');
    const r = runCli(args, {}, '/');
    expect(r.status).toBe(0);
    expect(fs.existsSync(path.join(w.outbox, 'bad.x12'))).toBe(true);
  });
});
