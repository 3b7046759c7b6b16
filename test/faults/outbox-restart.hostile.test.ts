// Attacks that meet gridsync at a restart: `gridsync once` killed with SIGKILL at a named crash
// point, the folder tampered with while it is down, then run again — as `nobody` (setpriv) when
// the tests run as root, as the daemon would run.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cliPath } from '../helpers/daemon-child.js';
import { makeDaemonWorld, type DaemonWorld } from '../helpers/daemon-config.js';
import { x12 } from '../helpers/edi.js';
import { listFiles } from '../helpers/world.js';
import { isRoot, prerequisite, runs } from '../helpers/require-tool.js';

const hasSetpriv = prerequisite(
  'root and setpriv',
  isRoot && runs('setpriv', '--version'),
  'the restart attacks run gridsync as the current user, not as nobody',
);

let w: DaemonWorld | undefined;
afterEach(() => {
  w?.cleanup();
  w = undefined;
});

/** `gridsync once`, as nobody when root; killed (and reported as hung) after `limitMs`. */
function once(
  world: DaemonWorld,
  env: Record<string, string> = {},
  limitMs = 30_000,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; hung: boolean; stderr: string }> {
  if (hasSetpriv) execFileSync('chown', ['-R', 'nobody:nogroup', world.dir]);
  const cmd = hasSetpriv
    ? ['/usr/bin/setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups', process.execPath]
    : [process.execPath];
  const childEnv: Record<string, string | undefined> = { ...process.env, ...env };
  delete childEnv.NODE_OPTIONS;
  const child = spawn(cmd[0] as string, [...cmd.slice(1), cliPath, 'once', '-c', world.configFile], {
    env: childEnv,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  let hung = false;
  const timer = setTimeout(() => {
    hung = true;
    child.kill('SIGKILL');
  }, limitMs);
  return new Promise((resolve) =>
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, hung, stderr });
    }),
  );
}

describe('restart after a crash, with the outbox tampered with meanwhile', () => {
  it('issue 11 #13: no stale done marker survives a crash in the claim; the next file of that name is not claimed while being written', async () => {
    w = makeDaemonWorld(
      {},
      { outbox: { dir: './outbox', sentDir: './sent', errorDir: './error', readiness: 'marker', rescanMs: '500ms' } },
    );
    fs.mkdirSync(w.outbox, { recursive: true });
    fs.writeFileSync(path.join(w.outbox, 'order.x12'), x12(1));
    fs.writeFileSync(path.join(w.outbox, 'order.x12.done'), '');
    const crashed = await once(w, { GRIDSYNC_CRASH_AT: 'out.claim-renamed' });
    expect(crashed.signal).toBe('SIGKILL');
    const finished = await once(w);
    expect(finished.hung).toBe(false);
    expect(listFiles(w.outbox)).toEqual([]);
    // The ERP starts writing the next order.x12; its marker comes only when it is complete.
    const partial = x12(2).slice(0, 60);
    fs.writeFileSync(path.join(w.outbox, 'order.x12'), partial);
    await once(w);
    expect(fs.readFileSync(path.join(w.outbox, 'order.x12'), 'utf8')).toBe(partial);
    expect(listFiles(w.sent)).toEqual(['order.x12']);
    expect(fs.readFileSync(path.join(w.sent, 'order.x12'), 'utf8')).toBe(x12(1));
  }, 120_000);

  for (const [what, plant] of [
    ['a FIFO', (p: string) => execFileSync('mkfifo', [p])],
    ['a symlink to /dev/zero', (p: string) => fs.symlinkSync('/dev/zero', p)],
  ] as const) {
    it(`issue 11 #3: ${what} put in place of a file whose claim was journalled does not hang the restart; it goes to errorDir`, async () => {
      w = makeDaemonWorld({}, { outbox: { dir: './outbox', sentDir: './sent', errorDir: './error', stableMs: '50ms', rescanMs: '500ms' } });
      fs.mkdirSync(w.outbox, { recursive: true });
      const file = path.join(w.outbox, 'swap.x12');
      fs.writeFileSync(file, x12(4));
      expect((await once(w, { GRIDSYNC_CRASH_AT: 'out.claiming' })).signal).toBe('SIGKILL');
      fs.rmSync(file);
      plant(file);
      const r = await once(w, {}, 20_000);
      expect(r.hung).toBe(false);
      expect(r.code).toBe(1);
      expect(listFiles(w.sent)).toEqual([]);
      expect(fs.readdirSync(w.error).sort()).toEqual(['swap.x12', 'swap.x12.error.json']);
      expect(JSON.parse(fs.readFileSync(path.join(w.error, 'swap.x12.error.json'), 'utf8')).reason).toMatch(
        what === 'a FIFO' ? /FIFO/ : /symbolic link/,
      );
    }, 60_000);
  }
});
