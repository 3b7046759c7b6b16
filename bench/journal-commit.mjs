// `node bench/journal-commit.mjs [concurrency …]` (after `npm run build`): the journal's CPU per
// parcel alone — 2,000 parcels listed in one batch, then staged, placed and confirmed by N workers
// in parallel, each transition awaited as the inbound pipeline does (lingering when not alone) —
// for each concurrency given (default 1 2 8 32), and the throughput (parcels per second of wall
// time). Shows what group commit saves: with one worker every transition is a transaction (and a
// WAL fsync) of its own. With GRIDSYNC_BENCH_JOURNAL_URL=postgres://… it measures a PostgreSQL
// journal instead (every write fenced by a lease the bench takes first; the tables are emptied).
// `npm run bench` runs the same measurement for both backends side by side (`measureJournal`).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// GRIDSYNC_DIST: another build, as `npm run bench -- --against` hands it to its children.
const dist = process.env.GRIDSYNC_DIST ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist');
const { openJournal, InboundJournal } = await import(pathToFileURL(path.join(dist, 'journal', 'index.js')).href);
const N = 2000;

/** One measurement: CPU ms per parcel (this process) and parcels/s; `url` undefined: SQLite. */
export async function measureJournal(concurrency, url) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gridsync-journal-bench-'));
  const journal = await openJournal({ url, stateDir: dir }, { owner: 'bench' });
  if (url) {
    // A lease left by an earlier (killed) bench is not ours to renew: start from none.
    for (const table of ['inbound_parcels', 'lease']) await journal.maintain(`DELETE FROM ${table} WHERE mailbox_id = ?`, 1001);
    if (!(await journal.leases.acquire(1001, 600_000))) throw new Error('could not take the bench mailbox lease');
  }
  const inbound = new InboundJournal(journal, { mayLinger: () => concurrency > 1 });
  const t0 = performance.now();
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
  const wall = performance.now() - t0;
  await journal.close();
  fs.rmSync(dir, { recursive: true, force: true });
  return { cpu: (used.user + used.system) / 1000 / N, perSecond: (N * 1000) / wall };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const levels = process.argv.slice(2).map(Number);
  for (const c of levels.length ? levels : [1, 2, 8, 32]) {
    const { cpu, perSecond } = await measureJournal(c, process.env.GRIDSYNC_BENCH_JOURNAL_URL);
    console.log(`concurrency ${c}: ${cpu.toFixed(3)} ms of CPU per parcel (4 transitions), ${Math.round(perSecond)} parcels/s`);
  }
}
