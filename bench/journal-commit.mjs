// `node bench/journal-commit.mjs [concurrency …]` (after `npm run build`): the journal's CPU per
// parcel alone — 2,000 parcels listed in one batch, then staged, placed and confirmed by N workers
// in parallel, each transition awaited as the inbound pipeline does (lingering when not alone) —
// for each concurrency given (default 1 2 8 32). Shows what group commit saves: with one worker
// every transition is a transaction (and a WAL fsync) of its own.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const dist = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist');
const { Journal, InboundJournal } = await import(pathToFileURL(path.join(dist, 'journal', 'index.js')).href);
const N = 2000;

async function measure(concurrency) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-journal-bench-'));
  const journal = Journal.open(path.join(dir, 'journal.sqlite'));
  const inbound = new InboundJournal(journal, { mayLinger: () => concurrency > 1 });
  const cpu0 = process.cpuUsage();
  await Promise.all(
    Array.from({ length: N }, (_, k) =>
      inbound.recordListed(1001, { parcelId: k + 1, fileName: `b-${k}.x12`, bytes: 5120, gridIdFrom: 5002, gridIdTo: 5001 }),
    ),
  );
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < N) {
        const id = ++next;
        await inbound.markStaged(1001, id, {
          stagingPath: `/staging/${id}.part`,
          bytes: 5120,
          sha256: 'ab'.repeat(32),
          finalPath: `/inbox/b-${id}.x12`,
          fileName: `b-${id}.x12`,
        });
        await inbound.markPlaced(1001, id);
        await inbound.markConfirmed(1001, id, 'confirmed');
      }
    }),
  );
  const used = process.cpuUsage(cpu0);
  journal.close();
  fs.rmSync(dir, { recursive: true, force: true });
  return (used.user + used.system) / 1000 / N;
}

const levels = process.argv.slice(2).map(Number);
for (const c of levels.length ? levels : [1, 2, 8, 32]) {
  console.log(`concurrency ${c}: ${(await measure(c)).toFixed(3)} ms of CPU per parcel (4 transitions)`);
}
