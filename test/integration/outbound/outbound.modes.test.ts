import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { OutboundPipeline, OutboxConfig } from '../../../src/outbound/index.js';
import { x12 } from '../../helpers/edi.js';
import { repoRoot } from '../../helpers/journal-child.js';
import { emulatorParcels, listFiles, makeWorld, outboundPipeline, type TestWorld } from '../../helpers/world.js';
import { isRoot, prerequisite } from '../../helpers/require-tool.js';

const asRoot = prerequisite('root (to run the daemon as nobody)', isRoot, 'an unreadable outbox file is not checked');

let w: TestWorld;
beforeEach(async () => {
  w = await makeWorld();
});
afterEach(async () => w.close());

const pipeline = (over: Partial<OutboxConfig> = {}): OutboundPipeline => outboundPipeline(w, { stableMs: 20, concurrency: 8, ...over });

describe('outbound modes', () => {
  it('done-marker mode: sends only files whose marker exists, and removes the marker after the claim', async () => {
    fs.writeFileSync(path.join(w.dirs.outbox, 'ready.x12'), x12(1));
    fs.writeFileSync(path.join(w.dirs.outbox, 'ready.x12.done'), '');
    fs.writeFileSync(path.join(w.dirs.outbox, 'waiting.x12'), x12(2));
    const r = await pipeline({ readiness: 'marker' }).runCycle();
    expect(r).toMatchObject({ claimed: 1, archived: 1 });
    expect(listFiles(w.dirs.outbox)).toEqual(['waiting.x12']);
    expect(listFiles(w.dirs.sent)).toEqual(['ready.x12']);
  });

  it('1,000 files dropped at once are all sent exactly once (counted on the emulator and in the partner’s inbox)', async () => {
    for (let i = 0; i < 1000; i++) fs.writeFileSync(path.join(w.dirs.outbox, `bulk-${i}.x12`), x12(10_000 + i));
    const r = await pipeline().runCycle();
    expect(r).toMatchObject({ claimed: 1000, uploaded: 1000, archived: 1000 });
    const ours = (await emulatorParcels(w.emu, 1001)).filter((p) => p.direction === 'out');
    expect(new Set(ours.map((p) => p.fileName)).size).toBe(1000);
    expect(ours).toHaveLength(1000);
    const theirs = (await emulatorParcels(w.emu, 1002)).filter((p) => p.direction === 'in');
    expect(theirs).toHaveLength(1000);
    expect(listFiles(w.dirs.sent)).toHaveLength(1000);
    expect(listFiles(path.join(w.dirs.state, 'processing'))).toEqual([]);
  }, 120_000);

  it.skipIf(!asRoot)('an unreadable file goes to errorDir with its reason; the run goes on (daemon as nobody)', async () => {
    for (const d of Object.values(w.dirs)) fs.chownSync(d, 65534, 65534);
    fs.chmodSync(w.root, 0o755);
    fs.writeFileSync(path.join(w.dirs.outbox, 'secret.x12'), x12(3), { mode: 0o600 });
    fs.writeFileSync(path.join(w.dirs.outbox, 'fine.x12'), x12(4), { mode: 0o644 });
    fs.chownSync(path.join(w.dirs.outbox, 'fine.x12'), 65534, 65534);
    await w.journal.close();
    for (const f of fs.readdirSync(w.dirs.state)) fs.rmSync(path.join(w.dirs.state, f), { recursive: true, force: true });
    const cfg = path.join(w.root, 'gridsync.yaml');
    fs.writeFileSync(
      cfg,
      `api: { baseUrl: "${w.emu.url}", apiKey: demo-key-1001 }\nstateDir: ${w.dirs.state}\nlog: { level: warn, pretty: false }\nmailboxes:\n  - mailboxId: 1001\n    outbox: { dir: ${w.dirs.outbox}, sentDir: ${w.dirs.sent}, errorDir: ${w.dirs.error}, stableMs: 20 }\n`,
    );
    const code = await new Promise((r) =>
      spawn(process.execPath, [path.join(repoRoot, 'dist/cli/main.js'), 'once', '-c', cfg], {
        uid: 65534,
        gid: 65534,
        stdio: 'ignore',
      }).on('exit', r),
    );
    expect(code).toBe(1);
    expect(listFiles(w.dirs.sent)).toEqual(['fine.x12']);
    expect(listFiles(w.dirs.error)).toEqual(['secret.x12', 'secret.x12.error.json']);
    expect(JSON.parse(fs.readFileSync(path.join(w.dirs.error, 'secret.x12.error.json'), 'utf8')).reason).toMatch(/unreadable.*EACCES/);
  });

  it('gridsync requeue puts a file from errorDir back into the outbox, and it is sent next time', async () => {
    fs.writeFileSync(path.join(w.dirs.outbox, 'late.x12'), x12(5));
    fs.writeFileSync(path.join(w.dirs.outbox, 'early.x12'), x12(5));
    await pipeline().runCycle();
    const dup = listFiles(w.dirs.error).find((f) => !f.endsWith('.json')) as string;
    expect(dup).toBeDefined();
    const cfg = path.join(w.root, 'gridsync.yaml');
    fs.writeFileSync(
      cfg,
      `api: { baseUrl: "${w.emu.url}", apiKey: demo-key-1001 }\nstateDir: ${w.dirs.state}\nmailboxes:\n  - mailboxId: 1001\n    outbox: { dir: ${w.dirs.outbox}, sentDir: ${w.dirs.sent}, errorDir: ${w.dirs.error}, duplicates: allow }\n`,
    );
    const out = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
      const c = spawn(process.execPath, [path.join(repoRoot, 'dist/cli/main.js'), 'requeue', '-c', cfg, dup], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let stdout = '';
      c.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      c.on('exit', (code) => resolve({ code, stdout }));
    });
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/requeued/);
    expect(listFiles(w.dirs.error)).toEqual([]);
    expect(listFiles(w.dirs.outbox)).toEqual([dup]);
    const r = await pipeline({ duplicates: 'allow' }).runCycle();
    expect(r.archived).toBe(1);
    const events = w.journal.db.prepare("SELECT to_state FROM events WHERE direction = 'out' AND to_state = 'requeued'").all();
    expect(events).toHaveLength(1);
  });
});
