// The outbox replaced, while the daemon runs, by a link to a folder on another filesystem (a mount
// moved, a share remapped): every claim's rename into processing fails (EXDEV). The file stays in
// the outbox, unharmed — but each scan only logged a warning: nothing counted as deferred, so the
// stuck watch never fired and /readyz stayed green while nothing was sent. Each try now counts as
// deferred, with a reason that names the fix.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { x12 } from '../../helpers/edi.js';
import { prerequisite } from '../../helpers/require-tool.js';
import { listFiles, makeWorld, outboundPipeline, type TestWorld } from '../../helpers/world.js';

let w: TestWorld;
const elsewhere = '/dev/shm';
const usable = prerequisite('/dev/shm (a second filesystem)', fs.existsSync(elsewhere), 'a claim across filesystems is not checked');

describe.skipIf(!usable)('the outbox moved to another filesystem while running', () => {
  beforeEach(async () => {
    w = await makeWorld({}, 'demo-key-1001');
  });
  afterEach(async () => w.close());

  it('counts each failed claim as deferred, with the reason; the file stays in the outbox', async () => {
    const p = outboundPipeline(w);
    await p.checkPrerequisites();
    const other = fs.mkdtempSync(path.join(elsewhere, 'gridsync-outbox-'));
    try {
      fs.rmSync(w.dirs.outbox, { recursive: true });
      fs.symlinkSync(other, w.dirs.outbox);
      expect(fs.statSync(other).dev).not.toBe(fs.statSync(path.join(w.dirs.state)).dev);
      fs.writeFileSync(path.join(other, 'inv.x12'), x12(5));
      await new Promise((r) => setTimeout(r, 80));
      for (let pass = 0; pass < 3; pass++) {
        const r = await p.runCycle();
        expect(r.deferred).toBeGreaterThanOrEqual(1);
      }
      const row = w.journal.db.prepare('SELECT state, last_error FROM outbound_files').get() as { state: string; last_error: string };
      expect(row.state).toBe('claiming');
      expect(row.last_error).toMatch(/no longer on one filesystem.*outbox\.processingDir/);
      expect(listFiles(other)).toEqual(['inv.x12']);
      expect(listFiles(w.dirs.error)).toEqual([]);
    } finally {
      fs.rmSync(other, { recursive: true, force: true });
    }
  });
});
