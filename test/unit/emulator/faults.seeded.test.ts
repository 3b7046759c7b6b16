import { describe, expect, it } from 'vitest';
import { FaultInjector } from '../../../packages/emulator/src/faults.js';

const schedule = (seed: number): string[] => {
  const f = new FaultInjector(() => 0);
  f.set({ seed, rules: [{ endpoint: '*', rate500: 0.2, resetAfterRate: 0.2 }] });
  return Array.from({ length: 200 }, () => {
    const p = f.plan('parcels.upload');
    return p.status ? String(p.status) : p.resetAfter ? 'reset' : '-';
  });
};

describe('emulator fault injection', () => {
  it('the same seed gives the same schedule; another seed a different one', () => {
    expect(schedule(7)).toEqual(schedule(7));
    expect(schedule(7)).not.toEqual(schedule(8));
  });

  it('injects at roughly the configured rates and counts each kind', () => {
    const f = new FaultInjector(() => 0);
    f.set({ seed: 3, rules: [{ endpoint: '*', rate500: 0.25 }] });
    for (let i = 0; i < 2000; i++) f.plan('parcels.get');
    expect(f.injected['500']).toBeGreaterThan(400);
    expect(f.injected['500']).toBeLessThan(600);
  });

  it('applies a rule only to its endpoint; wrong bytes only to downloads', () => {
    const f = new FaultInjector(() => 0);
    f.set({
      seed: 1,
      rules: [
        { endpoint: 'parcels.download', rate503: 1 },
        { endpoint: '*', wrongBytesRate: 1 },
      ],
    });
    expect(f.plan('parcels.get')).toMatchObject({ wrongBytes: false });
    expect(f.plan('parcels.get').status).toBeUndefined();
    expect(f.plan('parcels.download').status).toBe(503);
    f.set({ seed: 1, rules: [{ endpoint: '*', wrongBytesRate: 1 }] });
    expect(f.plan('parcels.download').wrongBytes).toBe(true);
  });

  it('gives Retry-After in seconds, or as an HTTP date from the injected clock', () => {
    const f = new FaultInjector(() => Date.UTC(2026, 10, 22, 12, 0, 0));
    f.set({ rules: [{ rate429: 1, retryAfterSeconds: 3 }] });
    expect(f.plan('x').retryAfter).toBe('3');
    f.set({ rules: [{ rate429: 1, retryAfterSeconds: 3, retryAfterDate: true }] });
    expect(f.plan('x').retryAfter).toBe('Sun, 22 Nov 2026 12:00:03 GMT');
  });

  it('rejects an unknown field in the config', () => {
    const f = new FaultInjector(() => 0);
    expect(() => f.set({ rules: [{ rate5000: 1 }] })).toThrow();
  });
});
