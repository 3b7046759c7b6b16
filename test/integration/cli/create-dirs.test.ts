// createDirs: false — a missing folder (an unmounted share) stops start-up with exit 2 naming the
// key, instead of gridsync creating it on the local disk and filling that; the default still creates.
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { makeDaemonWorld, type DaemonWorld } from '../../helpers/daemon-config.js';
import { runCli } from '../../helpers/daemon-child.js';

const worlds: DaemonWorld[] = [];
afterEach(() => worlds.splice(0).forEach((w) => w.cleanup()));

describe('createDirs', () => {
  it('false: a missing inbox is an error, nothing is created; true (default): folders are created', () => {
    const w = makeDaemonWorld();
    worlds.push(w);
    const c = YAML.parse(fs.readFileSync(w.configFile, 'utf8'));
    c.createDirs = false;
    fs.writeFileSync(w.configFile, YAML.stringify(c));
    for (const d of [w.state, w.outbox, w.sent, w.error]) fs.mkdirSync(d, { recursive: true });
    const r = runCli(['once', '-c', w.configFile]);
    expect(r.status).toBe(2);
    expect(r.stdout + r.stderr).toMatch(/createDirs: false and mailboxes\[0\]\.inbox\.dir .*inbox does not exist — an unmounted share\?/);
    expect(fs.existsSync(w.inbox)).toBe(false);

    c.createDirs = true;
    fs.writeFileSync(w.configFile, YAML.stringify(c));
    expect(runCli(['once', '-c', w.configFile]).status).toBe(0);
    expect(fs.statSync(w.inbox).isDirectory()).toBe(true);
    expect(path.basename(w.inbox)).toBe('inbox');
  });
});
