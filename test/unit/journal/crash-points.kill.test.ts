import { describe, expect, it } from 'vitest';
import { distUrl, runModuleChild } from '../../helpers/journal-child.js';

const passFiveTimes = `
  const { crashPoint } = await import(${JSON.stringify(distUrl('journal/crash-points.js'))});
  for (let i = 1; i <= 5; i++) { console.log('pass ' + i); crashPoint('in.placed'); crashPoint('out.claimed'); }
  console.log('done');
`;

describe('crash points', () => {
  it('SIGKILLs the process the n-th time it passes the named point, not before', async () => {
    const r = await runModuleChild(passFiveTimes, { GRIDSYNC_CRASH_AT: 'in.placed:3' }).exited;
    expect(r.signal).toBe('SIGKILL');
    expect(r.stdout.trim().split('\n')).toEqual(['pass 1', 'pass 2', 'pass 3']);
  });

  it('takes several comma-separated points, the first one reached wins', async () => {
    const r = await runModuleChild(passFiveTimes, { GRIDSYNC_CRASH_AT: 'in.placed:4, out.claimed:2' }).exited;
    expect(r.signal).toBe('SIGKILL');
    expect(r.stdout.trim().split('\n').at(-1)).toBe('pass 2');
  });

  it('does nothing when the variable is unset or names another point', async () => {
    const r = await runModuleChild(passFiveTimes, { GRIDSYNC_CRASH_AT: 'in.confirmed:1' }).exited;
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('done');
  });
});
