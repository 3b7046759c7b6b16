// Sending the same content again on purpose: the duplicate check refuses it, also after a plain
// requeue; `requeue --force` sends that one file anyway, and a copy dropped after it is refused
// again. `requeue --all` with nothing in errorDir says so instead of printing nothing.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeDaemonWorld, type DaemonWorld } from '../../helpers/daemon-config.js';
import { runCli } from '../../helpers/daemon-child.js';
import { x12 } from '../../helpers/edi.js';

const worlds: DaemonWorld[] = [];
afterEach(() => worlds.splice(0).forEach((w) => w.cleanup()));

describe('requeue --force', () => {
  it('sends one refused duplicate anyway; the next copy is refused again', () => {
    const w = makeDaemonWorld();
    worlds.push(w);
    const once = (): number | null => runCli(['once', '-c', w.configFile]).status;
    const requeue = (...args: string[]) => runCli(['requeue', '-c', w.configFile, ...args]);
    fs.mkdirSync(w.outbox, { recursive: true });
    const content = x12(41);
    fs.writeFileSync(path.join(w.outbox, 'first.x12'), content);
    expect(once()).toBe(0);
    expect(fs.readdirSync(w.sent)).toEqual(['first.x12']);

    fs.writeFileSync(path.join(w.outbox, 'again.x12'), content);
    expect(once()).toBe(1);
    expect(JSON.stringify(JSON.parse(fs.readFileSync(path.join(w.error, 'again.x12.error.json'), 'utf8')))).toMatch(/duplicate content/);

    expect(requeue('again.x12').status).toBe(0);
    expect(once()).toBe(1);
    expect(fs.existsSync(path.join(w.error, 'again.x12'))).toBe(true);

    const forced = requeue('--force', 'again.x12');
    expect(forced.status).toBe(0);
    expect(forced.stdout).toMatch(/requeued .*again\.x12 → .*\(sent even if a duplicate\)/);
    expect(once()).toBe(0);
    expect(fs.readdirSync(w.sent).sort()).toEqual(['again.x12', 'first.x12']);
    expect(fs.existsSync(path.join(w.error, 'again.x12'))).toBe(false);

    fs.writeFileSync(path.join(w.outbox, 'third.x12'), content);
    expect(once()).toBe(1);
    expect(fs.existsSync(path.join(w.error, 'third.x12'))).toBe(true);
  });

  it('--all with an empty errorDir says there is nothing to requeue', () => {
    const w = makeDaemonWorld();
    worlds.push(w);
    fs.mkdirSync(w.error, { recursive: true });
    const r = runCli(['requeue', '-c', w.configFile, '--all']);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain(`nothing to requeue: no file in ${w.error}`);
    expect(fs.existsSync(path.join(w.dir, 'state'))).toBe(false); // nothing to do: no journal created either
  });
});
