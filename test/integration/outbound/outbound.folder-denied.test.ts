// An outbox gridsync may not move files out of (owned by the ERP's user, 0755: a common set-up
// mistake, or a permission changed under a running daemon). The claim's rename answers EACCES,
// which was taken for an unreadable file: at every run (under `run`, every rescan) each file got a
// journal row and an `.error.json` in errorDir, while the file itself stayed in the outbox, and
// `once` said "unreadable". Now the folder is named once, the files stay in the outbox without a
// report, `once` does not wait out its drain for them, and once the folder allows it they are sent.
// The built CLI as nobody (setpriv), so that the folder's permission applies.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cliPath } from '../../helpers/daemon-child.js';
import { makeDaemonWorld } from '../../helpers/daemon-config.js';
import { x12 } from '../../helpers/edi.js';
import { isRoot, prerequisite, runs } from '../../helpers/require-tool.js';

const NOBODY = 65534;
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});

const asNobody = prerequisite(
  'root and setpriv',
  isRoot && runs('setpriv', '--version'),
  'an outbox gridsync may not write to is not checked',
);

function onceAsNobody(w: { dir: string; configFile: string }): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(
    'setpriv',
    [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', process.execPath, cliPath, 'once', '-c', w.configFile],
    { cwd: w.dir, encoding: 'utf8', timeout: 60_000 },
  );
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe.skipIf(!asNobody)('an outbox gridsync may not move files out of', () => {
  it('leaves the files there without a report, names the folder once, and sends them once the folder allows it', () => {
    const w = makeDaemonWorld({ log: { level: 'info', pretty: false } }, { inbox: undefined });
    cleanups.push(() => w.cleanup());
    for (const d of [w.dir, w.sent, w.error, w.state]) fs.mkdirSync(d, { recursive: true });
    fs.mkdirSync(w.outbox, { mode: 0o755 }); // root's: nobody may read it, not rename out of it
    const old = new Date(Date.now() - 60_000);
    for (const [k, name] of ['orders.x12', 'invoices.x12'].entries()) {
      fs.writeFileSync(path.join(w.outbox, name), x12(k + 1));
      fs.utimesSync(path.join(w.outbox, name), old, old);
      fs.chownSync(path.join(w.outbox, name), NOBODY, NOBODY);
    }
    for (const d of [w.dir, w.sent, w.error, w.state]) fs.chownSync(d, NOBODY, NOBODY);
    fs.chmodSync(w.configFile, 0o600);
    fs.chownSync(w.configFile, NOBODY, NOBODY);

    for (let run = 1; run <= 2; run++) {
      const r = onceAsNobody(w);
      expect(r.status, `run ${run}: ${r.stderr}`).toBe(1);
      expect(fs.readdirSync(w.error), `run ${run}: no report for a file that is not at fault`).toEqual([]);
      expect(fs.readdirSync(w.outbox).sort()).toEqual(['invoices.x12', 'orders.x12']);
      expect(r.stderr).toMatch(/outbound orders\.x12: deferred: gridsync \(uid 65534\) may not move files out of the outbox .*outbox/);
      const denied = r.stdout.split('\n').filter((l) => l.includes('"OUTBOUND_FOLDER_DENIED"') && l.includes('"level":50'));
      expect(denied, `run ${run}: the folder named once`).toHaveLength(1);
      expect(r.stdout + r.stderr).not.toMatch(/unreadable: EACCES/);
    }

    fs.chownSync(w.outbox, NOBODY, NOBODY);
    const r = onceAsNobody(w);
    expect(r.status, r.stderr).toBe(0);
    expect(fs.readdirSync(w.sent).sort()).toEqual(['invoices.x12', 'orders.x12']);
    expect(fs.readdirSync(w.error)).toEqual([]);
  }, 120_000);
});
