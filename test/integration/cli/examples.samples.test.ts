// The sample interchanges the Quick start names: both pass the envelope check and are sent by
// `once` against the embedded emulator (none ended in errorDir), and the README points at them.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeDaemonWorld, type DaemonWorld } from '../../helpers/daemon-config.js';
import { runCli } from '../../helpers/daemon-child.js';
import { repoRoot } from '../../helpers/journal-child.js';

const worlds: DaemonWorld[] = [];
afterEach(() => worlds.splice(0).forEach((w) => w.cleanup()));

describe('examples/', () => {
  it('the X12 and EDIFACT samples are sent as they are; the Quick start names them', () => {
    const w = makeDaemonWorld();
    worlds.push(w);
    fs.mkdirSync(w.outbox, { recursive: true });
    for (const f of ['invoice-810.x12', 'order-orders.edi']) fs.copyFileSync(path.join(repoRoot, 'examples', f), path.join(w.outbox, f));
    const r = runCli(['once', '-c', w.configFile]);
    expect(r.stdout + r.stderr).not.toMatch(/invalid interchange/);
    expect(r.status).toBe(0);
    expect(fs.readdirSync(w.sent).sort()).toEqual(['invoice-810.x12', 'order-orders.edi']);
    const readme = fs.readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
    const quickStart = readme.slice(readme.indexOf('## Quick start'), readme.indexOf('\n## ', readme.indexOf('## Quick start') + 5));
    expect(quickStart).toContain('examples/invoice-810.x12');
    expect(quickStart).toContain('examples/order-orders.edi');
  });
});
