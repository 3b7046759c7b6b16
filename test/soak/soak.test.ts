// The CI-sized soak run (issue #7): the whole daemon as a child process under every fault at once,
// for about a minute, then the invariants. `npm run soak -- --minutes N` runs the long form.
import { describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM harness without type declarations (it runs outside the TS build)
import { runSoak } from './soak.mjs';

const seconds = Number(process.env.GRIDSYNC_SOAK_SECONDS ?? 60);

describe('soak', () => {
  it(`loses nothing and duplicates nothing under ${seconds}s of kills, outages and faults`, async () => {
    const report = await runSoak({ seconds, seed: Number(process.env.GRIDSYNC_SOAK_SEED ?? 20261122), log: (m: string) => console.log(`[soak] ${m}`) });
    console.log(JSON.stringify(report));
    expect(report.violations).toEqual([]);
    expect(report.lost).toBe(0);
    expect(report.duplicated).toBe(0);
    expect(report.parcelsIn).toBeGreaterThan(20);
    expect(report.filesOut).toBeGreaterThan(20);
    expect(report.kills.SIGKILL).toBeGreaterThan(0);
    expect(report.maxRssMb).toBeLessThan(400);
  }, 240_000);
});
