/**
 * The chaos test of several instances on one PostgreSQL journal (issue: high availability): three
 * `gridsync run` processes, each with its own stateDir as on separate hosts, share the inbox and
 * outbox folders, one service (the emulator, its own process) and one PostgreSQL server. While a
 * partner sends parcels and the ERP drops files, seeded faults follow each other: SIGKILL and
 * restart; a holder that stops itself exactly before its rename or its upload (pause points, read
 * from the source like the crash points) and is woken after its lease ran out; SIGSTOP of the
 * holder past its lease; pg_terminate_backend of the instances' connections; a PostgreSQL
 * restart; the emulator's HTTP faults.
 *
 * Oracle: every parcel exactly once in the inbox and confirmed, every outbox file exactly once on
 * the service and in sentDir, nothing in errorDir; the fencing tokens only grow; every failover
 * after a holder was killed or stopped within the lease + 2 s; the stale-owner paths ran (writes refused or
 * side effects self-fenced, pause points reached); and the fence itself, in every run: the holder
 * woken at `in.before-rename` after a takeover has a journal write refused by the fence (its
 * refused-writes metric grows; a self-fenced side effect is not counted there). Nothing checks the
 * lease between that rename and its journal write, so self-fencing cannot stand in for the fence
 * there: with the token check removed the test fails whatever the seed.
 *
 * Each of the seven fault kinds once (the HTTP faults overlapping the SIGSTOP episode), then random
 * faults for GRIDSYNC_CHAOS_SECONDS (default 45: about 90 s in all on a 2-core machine);
 * GRIDSYNC_CHAOS_SEED sets the seed. Each failover's time from the kill to the next lease taken
 * and to the first parcel the survivor placed is printed.
 */
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/daemon-child.js';
import { x12 } from '../helpers/edi.js';
import { isStopped, startHaWorld, type HaInstance, type HaWorld } from '../helpers/ha-world.js';
import { repoRoot } from '../helpers/journal-child.js';
import { postgresForFile } from '../helpers/postgres.js';

const server = postgresForFile('the chaos test does not run');

const LEASE_MS = 3_000;
const RENEW_MS = 750;
const CHAOS_SECONDS = Number(process.env.GRIDSYNC_CHAOS_SECONDS ?? 45);
const SEED = Number(process.env.GRIDSYNC_CHAOS_SEED ?? Date.now() % 1_000_000);

/** Every pause point the source names (`pausePoint('in.before-rename')` in src/, read here). */
function pausePointsInSource(): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (p.endsWith('.ts'))
        out.push(...[...fs.readFileSync(p, 'utf8').matchAll(/\bpausePoint\('([^']+)'\)/g)].map((m) => m[1] as string));
    }
  };
  walk(path.join(repoRoot, 'src'));
  return out.sort();
}

function prng(seed: number): { next: () => number; int: (lo: number, hi: number) => number } {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)) };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const taken = (w: HaWorld): { at: number; who: string; token: number }[] =>
  w.instances
    .flatMap((i) =>
      i
        .lines()
        .filter((l) => l.msg === 'mailbox lease taken')
        .map((l) => ({ at: Number(l.time), who: i.name, token: Number(l.fencingToken) })),
    )
    .sort((x, y) => x.at - y.at);
const count = (w: HaWorld, match: (l: Record<string, unknown>) => boolean): number =>
  w.instances.reduce((n, i) => n + i.lines().filter(match).length, 0);
/**
 * The instance's journal writes refused by the fence since it started (its metric; a self-fenced
 * side effect is not counted there); undefined when it does not answer (stopped) in time.
 */
const refusedByFence = async (i: HaInstance, timeoutMs = 5_000): Promise<number | undefined> => {
  const text = await Promise.race([i.scrape().catch(() => undefined), sleep(timeoutMs).then(() => undefined)]);
  if (text === undefined) return undefined;
  const series = text.split('\n').filter((l) => l.startsWith('gridsync_lease_stale_writes_refused_total{'));
  return series.reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
};
/** Where the instance last stopped itself: `pausePoint` writes the point's name to its log right before. */
const lastPausePoint = (i: HaInstance): string | undefined =>
  [...fs.readFileSync(i.logFile, 'utf8').matchAll(/^pause point (\S+) reached/gm)].at(-1)?.[1];

describe.skipIf(!server.available)('chaos: three instances, one PostgreSQL journal', () => {
  it('the pause points it uses are in the source', () => {
    // Renamed in src, a point would never be reached and the chaos would freeze nobody. (The
    // folder-link tests use others: docs/testing.md.)
    expect(pausePointsInSource()).toEqual(expect.arrayContaining(['in.before-rename', 'out.before-upload']));
  });

  it(`nothing lost, nothing doubled, tokens only grow, failover within the lease + 2 s (seed ${SEED})`, async () => {
    const t0 = Date.now();
    const log = (m: string): void => console.log(`[chaos ${SEED} +${((Date.now() - t0) / 1000).toFixed(1)} s] ${m}`);
    const rnd = prng(SEED);
    const url = await server.createDatabase('chaos');
    const w = await startHaWorld({ journalUrl: url, instances: 3, leaseMs: LEASE_MS, renewMs: RENEW_MS, callMs: 3_000, pollMs: 300 });
    const failovers: number[] = [];
    const firstPlaced: number[] = [];
    let pausesReached = 0;
    /** Pause episodes at `in.before-rename` (each ended with a journal write refused by the fence). */
    let renameEpisodes = 0;
    let producing = true;
    let control = 1;
    const producer = (async () => {
      for (let k = 0; producing; k++) {
        await w.inject(`in-${k}.x12`, Buffer.from(x12(control++))).catch(() => undefined);
        w.dropOutbox(`out-${k}.x12`, Buffer.from(x12(control++)));
        await sleep(rnd.int(150, 450));
      }
    })();
    const holder = async (): Promise<HaInstance | undefined> => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      const { rows } = await c
        .query<{ owner: string }>('SELECT owner FROM lease WHERE expires_at > clock_timestamp()')
        .finally(() => c.end());
      const live = rows[0];
      return w.instances.find((i) => i.name === live?.owner);
    };
    /**
     * A stopped holder is woken once another instance has taken its mailbox over, within a few
     * hundred ms: the stale owner's late steps race the new owner's first ones, where only the
     * fencing token keeps them apart.
     */
    const wakeAfterTakeover = async (i: HaInstance, stoppedAt: number): Promise<number> => {
      const next = await eventually(() => taken(w).find((t) => t.at > stoppedAt && t.who !== i.name), LEASE_MS + 15_000, 'a takeover');
      await sleep(rnd.int(0, 600));
      log(`${i.name} stopped; ${next.who} took its mailbox over after ${next.at - stoppedAt} ms; woken ${Date.now() - next.at} ms later`);
      i.signal('SIGCONT');
      return next.at - stoppedAt;
    };
    /**
     * Waits until a process stops itself at its pause point (or the time is up); wakes it after a
     * takeover. Woken at `in.before-rename`, the stale holder renames (or finds the new owner did)
     * and then always writes to the journal — `placed`, or the failed attempt's note — with no
     * self-fence check in between: only the fence refuses that write. Its refused-writes metric,
     * scraped until the stop and again after the wake (no restart in between), must have grown;
     * the test stops here if it does not.
     */
    const wakeAfterPause = async (i: HaInstance, maxWaitMs: number): Promise<void> => {
      const end = Date.now() + maxWaitMs;
      let refusedBefore = 0;
      while (Date.now() < end && !isStopped(i.proc?.pid)) {
        // A scrape the stop cuts short answers nothing: the count before the stop stays.
        refusedBefore = (await refusedByFence(i, 500)) ?? refusedBefore;
        await sleep(200);
      }
      if (!isStopped(i.proc?.pid)) return log(`${i.name} did not reach its pause point`);
      pausesReached++;
      const point = lastPausePoint(i);
      log(`${i.name} stopped at its pause point ${point}`);
      await wakeAfterTakeover(i, Date.now());
      if (point !== 'in.before-rename') return;
      let refusedAfter: number | undefined;
      const fenced = await eventually(
        async () => ((refusedAfter = (await refusedByFence(i)) ?? refusedAfter) ?? 0) > refusedBefore,
        10_000,
        'a write refused by the fence',
      ).then(
        () => true,
        () => false,
      );
      log(`${i.name} woken at in.before-rename: writes refused by the fence ${refusedBefore} before, ${refusedAfter ?? '?'} after`);
      if (!fenced)
        throw new Error(
          `${i.name}, woken at in.before-rename after a takeover, had no journal write refused by the fence within 10 s ` +
            `(its gridsync_lease_stale_writes_refused_total: ${refusedBefore} before the stop, ${refusedAfter ?? 'no answer'} after the wake)`,
        );
      renameEpisodes++;
    };
    const inboxNow = (): string[] => fs.readdirSync(w.inbox).filter((f) => !f.startsWith('.'));
    /**
     * Kills the holder; then the next lease taken by another instance (within the lease + 2 s) and
     * the first parcel placed after the kill (the producer keeps parcels waiting; only the survivor
     * can place one).
     */
    const killAndFailover = async (victim: HaInstance): Promise<void> => {
      const before = new Set(inboxNow());
      const killedAt = Date.now();
      await victim.kill('SIGKILL');
      const placed = (async () => {
        while (Date.now() - killedAt < LEASE_MS + 15_000) {
          if (inboxNow().some((f) => !before.has(f))) return Date.now() - killedAt;
          await sleep(20);
        }
        return undefined;
      })();
      const next = await eventually(() => taken(w).find((t) => t.at > killedAt && t.who !== victim.name), LEASE_MS + 15_000, 'a failover');
      failovers.push(next.at - killedAt);
      const p = await placed;
      if (p !== undefined) firstPlaced.push(p);
      log(`failover: ${next.who} took the lease ${next.at - killedAt} ms after the kill, first parcel placed after ${p ?? '(none)'} ms`);
    };
    let faultsUntil = -1;
    try {
      // The first name is the one the fair share gives the mailbox to (it takes the mailbox back
      // whenever it is live): armed with both pause points, it stops itself mid-step twice, once
      // right before a rename and once right before an upload, each the first pause episodes wait for.
      const [first, ...others] = w.instances as [HaInstance, ...HaInstance[]];
      first.start({ GRIDSYNC_PAUSE_AT: `in.before-rename:${rnd.int(2, 4)},out.before-upload:${rnd.int(2, 4)}` });
      for (const i of others) i.start();
      await eventually(() => taken(w).length > 0, 30_000, 'a first holder');
      // A PostgreSQL restart early: a holder that cannot renew while the database is down and
      // whose journal writes are still queued when it comes back is the stale owner the fence stops.
      const kinds = ['pause', 'pause', 'pg-restart', 'sigkill', 'http-faults', 'sigstop', 'pg-terminate'];
      let end = Number.POSITIVE_INFINITY;
      for (let n = 0; ; n++) {
        if (n === kinds.length) end = Date.now() + CHAOS_SECONDS * 1000;
        if (Date.now() >= end) break;
        const kind = n < kinds.length ? (kinds[n] as string) : (kinds[rnd.int(2, kinds.length - 1)] as string);
        // As a supervisor would (systemd's Restart=): an instance that exited on its own — one
        // started while PostgreSQL was down refuses to run — is started again.
        for (const i of w.instances)
          if (!i.running) {
            log(`${i.name} had exited; started again`);
            i.start();
          }
        if (kind === 'sigkill' || kind === 'sigstop') await eventually(holder, 20_000, 'a holder');
        const h = await holder();
        log(`episode ${n}: ${kind} (holder ${h?.name ?? 'none'})`);
        if (kind === 'pause') {
          await wakeAfterPause(first, 30_000);
        } else if (kind === 'sigkill' && h) {
          await killAndFailover(h);
          await sleep(rnd.int(0, 1_000));
          h.start();
        } else if (kind === 'sigstop' && h) {
          const stoppedAt = Date.now();
          h.signal('SIGSTOP');
          failovers.push(await wakeAfterTakeover(h, stoppedAt));
        } else if (kind === 'pg-terminate') {
          await server.admin("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'gridsync'");
        } else if (kind === 'pg-restart') {
          // Down for up to past a lease: holders cannot renew, and whatever they had queued meets the
          // database again after someone else may have taken their mailbox.
          await server.restart(rnd.int(1_000, LEASE_MS + 1_000));
        } else if (kind === 'http-faults') {
          // On through this episode and the next (the faults overlap another kind of fault).
          await w.setFaults([{ endpoint: '*', rate500: 0.1, rate503: 0.05, resetAfterRate: 0.05, latencyMs: [0, 300] }]);
          faultsUntil = n + 1;
        }
        if (n === faultsUntil) await w.setFaults([]);
        await sleep(rnd.int(300, 1_000));
      }
      await w.setFaults([]);
      producing = false;
      await producer;
      log('chaos over; draining');
      for (const i of w.instances) {
        i.signal('SIGCONT');
        if (!i.running) i.start();
      }
      let last: string[] = [];
      await eventually(
        async () => {
          last = await w.violations();
          return last.length === 0;
        },
        90_000,
        'a clean end',
      ).catch(() => {
        throw new Error(`violations after the drain:\n${last.slice(0, 30).join('\n')}`);
      });

      const leases = taken(w);
      const tokens = leases.map((t) => t.token);
      // The stale-owner paths: a journal write refused for a stale token (it ends the holding), a
      // side effect a holder past its lease did not start. Hand-backs (fair share) are not counted.
      const refusedWrites = count(w, (l) => l.code === 'JOURNAL_LEASE_LOST' && l.why === 'write-refused');
      const selfFenced = count(w, (l) => l.code === 'JOURNAL_LEASE_LOST' && String(l.msg).endsWith('left to the mailbox lease holder'));
      const uploadWaits = count(w, (l) => String(l.msg).startsWith('an upload started by an earlier lease holder'));
      // Every write the fence refused, as the instances running now count it (a killed run's count is gone).
      let refusedNow = 0;
      for (const i of w.instances) refusedNow += (await refusedByFence(i)) ?? 0;
      log(
        `${leases.length} takeovers, tokens ${tokens[0]}..${tokens.at(-1)}, failovers (kill or SIGSTOP → lease taken) ${failovers.join(', ')} ms, ` +
          `kill → first parcel placed ${firstPlaced.join(', ')} ms, pause points reached ${pausesReached} of 2, ` +
          `woken at in.before-rename with a write refused by the fence ${renameEpisodes}, ` +
          `holdings ended by a refused write ${refusedWrites}, writes refused (live instances' metric) ${refusedNow}, ` +
          `side effects left to the holder ${selfFenced}, upload waits ${uploadWaits}`,
      );
      // The supervisor's restarts above hide no crash: the only exits allowed are start-up refusals.
      const crashes = w.instances.flatMap((i) =>
        fs
          .readFileSync(i.logFile, 'utf8')
          .split('\n')
          .filter((l) => /^\s+at |Uncaught|Unhandled/.test(l))
          .map((l) => `${i.name}: ${l.trim()}`),
      );
      expect(crashes).toEqual([]);
      // Tokens only grow: every takeover (in the order they happened) under a larger token.
      for (let k = 1; k < tokens.length; k++) expect(tokens[k], `takeover ${k}`).toBeGreaterThan(tokens[k - 1] as number);
      for (const ms of failovers) expect(ms).toBeLessThan(LEASE_MS + 2_000);
      expect(pausesReached).toBeGreaterThan(0);
      expect(refusedWrites + refusedNow + selfFenced).toBeGreaterThan(0);
      // The fence itself (wakeAfterPause): the holder woken right before its rename had a journal
      // write refused, which self-fencing cannot stand in for. That episode happens in every run.
      expect(renameEpisodes, 'pause episodes at in.before-rename').toBeGreaterThan(0);
    } finally {
      producing = false;
      await producer.catch(() => undefined);
      await w.close();
    }
  }, 400_000);
});
