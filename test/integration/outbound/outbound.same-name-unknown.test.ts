// Two exports of one name and one size (a daily file re-exported with a new control number) while
// the network drops answers. The service's outbox list tells parcels apart by name and size only,
// so an upload whose outcome is unknown could be matched with its namesake's parcel: the first
// export's upload never arrived, the second's did with its answer lost — and the first was taken
// as sent (its content never reached the service) while the second was sent again. Rows of one
// name now take turns, and one waits while an older namesake's outcome is unknown. Against a
// scripted service (not our emulator) that loses exactly the answers the story needs.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { x12 } from '../../helpers/edi.js';
import { startScriptedService, type ServiceParcel } from '../../helpers/scripted-service.js';
import { scriptedFolders } from '../../helpers/scripted-world.js';
import { listFiles, outboundPipeline } from '../../helpers/world.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('same-named exports of one size with upload outcomes unknown', () => {
  it('each content reaches the service exactly once, and each row records its own parcel', async () => {
    const svc = await startScriptedService();
    const first = x12(111_111);
    const second = x12(222_222);
    expect(first.length).toBe(second.length);
    let lossy = true;
    let nextId = 9_000_000n;
    svc.variants.fault = (req, res) => {
      if (!lossy || req.path !== '/v2/parcels/upload') return false;
      const content = Buffer.from(String(req.body.content), 'base64').toString();
      if (content === second) {
        // Taken by the service, its answer lost on the way back.
        const p: ServiceParcel = {
          parcelId: nextId++,
          mailboxId: 1001,
          fileName: String(req.body.fileName),
          content: Buffer.from(content),
          status: 'outboxPending',
          direction: 'out',
          created: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
          gridIdFrom: 7001,
          gridIdTo: 7002,
        };
        svc.parcels.push(p);
      }
      res.destroy(); // the first never arrives; for either the client sees only a broken connection
      return true;
    };
    const { client, journal, dirs } = scriptedFolders(svc, cleanups, { maxAttempts: 1 });
    const p = outboundPipeline({ client, journal, dirs }, { gridIdFrom: 7001, gridIdTo: 7002, maxAttempts: 10 });
    await p.checkPrerequisites();
    for (const content of [first, second]) {
      fs.writeFileSync(path.join(dirs.outbox, 'daily.x12'), content);
      await new Promise((r) => setTimeout(r, 80)); // older than stableMs
      await p.runCycle();
      expect(listFiles(dirs.outbox)).toEqual([]);
    }
    lossy = false;
    for (let pass = 0; pass < 3; pass++) await p.runCycle();
    const sent = svc.parcels.filter((x) => x.direction === 'out').map((x) => x.content.toString());
    expect(sent.sort()).toEqual([first, second].sort());
    const rows = journal.db.prepare('SELECT state, parcel_id FROM outbound_files ORDER BY id').all() as {
      state: string;
      parcel_id: number;
    }[];
    expect(rows.map((r) => r.state)).toEqual(['archived', 'archived']);
    expect(new Set(rows.map((r) => r.parcel_id)).size).toBe(2);
    expect(
      listFiles(dirs.sent)
        .map((f) => fs.readFileSync(path.join(dirs.sent, f), 'utf8'))
        .sort(),
    ).toEqual([first, second].sort());
  });
});
