/**
 * `{partner}`: the order of the sources (config, the service's record, the grid id), the cache of
 * answers and failures, and the bound on one lookup — the pure decisions, then the shell with a
 * scripted lookup and an injected clock.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULTS } from '../../../src/config/defaults.js';
import { GridApiError } from '../../../src/api/index.js';
import { afterLookup, configuredPartners, decidePartnerName, folderKey, learntFolder, PartnerNames } from '../../../src/inbound/index.js';

const none = new Map<number, string>();

describe('decidePartnerName (pure)', () => {
  it('no grid id at all: the fixed fallback name, never a lookup', () => {
    for (const g of [null, undefined, 0, -3, 1.5])
      expect(decidePartnerName(g, { configured: none, cached: undefined, canLookup: true, now: 0 })).toEqual({
        kind: 'name',
        name: DEFAULTS.partners.unknownName,
        source: 'none',
      });
  });

  it('a configured name wins over the cache and is never looked up', () => {
    const configured = new Map([[7001, 'Acme Corp']]);
    expect(decidePartnerName(7001, { configured, cached: { name: 'From service', until: 10 }, canLookup: true, now: 0 })).toEqual({
      kind: 'name',
      name: 'Acme Corp',
      source: 'config',
    });
  });

  it('a fresh cached answer is used; a stale one or none asks the service', () => {
    const k = { configured: none, canLookup: true };
    expect(decidePartnerName(7001, { ...k, cached: { name: 'Acme', until: 100 }, now: 99 })).toMatchObject({
      name: 'Acme',
      source: 'service',
    });
    expect(decidePartnerName(7001, { ...k, cached: { name: undefined, until: 100 }, now: 99 })).toMatchObject({
      name: '7001',
      source: 'grid-id',
    });
    expect(decidePartnerName(7001, { ...k, cached: { name: 'Acme', until: 100 }, now: 100 })).toEqual({ kind: 'lookup', gridId: 7001 });
    expect(decidePartnerName(7001, { ...k, cached: undefined, now: 0 })).toEqual({ kind: 'lookup', gridId: 7001 });
  });

  it('without a service call: the last known name, else the grid id', () => {
    const k = { configured: none, canLookup: false, now: 500 };
    expect(decidePartnerName(7001, { ...k, cached: { name: 'Acme', until: 100 } })).toMatchObject({ name: 'Acme' });
    expect(decidePartnerName(7001, { ...k, cached: undefined })).toMatchObject({ name: '7001', source: 'grid-id' });
  });

  it('every name is one safe path segment', () => {
    const k = { configured: none, canLookup: true, now: 0 };
    for (const hostile of ['../../etc', 'a/b', '..', 'x\u0000y\n', 'CON', ' . ', 'é'.repeat(300)]) {
      const d = decidePartnerName(7001, { ...k, cached: { name: hostile, until: 1 } });
      if (d.kind !== 'name') throw new Error('expected a name');
      expect(d.name).not.toMatch(/[/\\\u0000-\u001f]/);
      expect(d.name).not.toMatch(/^\.+$/);
      expect(Buffer.byteLength(d.name)).toBeLessThanOrEqual(200);
      expect(d.name.length).toBeGreaterThan(0);
    }
  });
});

describe('afterLookup (pure)', () => {
  const ttl = { ttlMs: 1000, failureTtlMs: 100 };
  it('an answer is kept for the TTL, a failure for the failure TTL', () => {
    expect(afterLookup(undefined, { ok: true, name: 'Acme' }, 5, ttl)).toEqual({ name: 'Acme', until: 1005 });
    expect(afterLookup(undefined, { ok: false }, 5, ttl)).toEqual({ name: undefined, until: 105 });
  });
  it('a failure keeps the name learned before: a folder does not flip during a bad moment of the service', () => {
    expect(afterLookup({ name: 'Acme', until: 0 }, { ok: false }, 5, ttl)).toEqual({ name: 'Acme', until: 105 });
  });
});

describe('PartnerNames (shell)', () => {
  it('asks the service once per grid id and TTL — parallel parcels share one call; failures are cached too', async () => {
    let now = 0;
    const calls: number[] = [];
    const names = new PartnerNames({
      lookup: async (g) => {
        calls.push(g);
        if (g === 7002) throw new GridApiError('ids.get', 404, 'ObjectNotFound', 'no such grid ID');
        return 'Acme Corp';
      },
      ttlMs: 1000,
      failureTtlMs: 100,
      now: () => now,
    });
    expect(await Promise.all([names.nameOf(7001), names.nameOf(7001), names.nameOf(7001)])).toEqual([
      'Acme Corp',
      'Acme Corp',
      'Acme Corp',
    ]);
    expect(await names.nameOf(7002)).toBe('7002');
    expect(await names.nameOf(7002)).toBe('7002');
    expect(calls).toEqual([7001, 7002]);
    now = 150; // the failure has expired, the answer not
    expect(await names.nameOf(7001)).toBe('Acme Corp');
    expect(await names.nameOf(7002)).toBe('7002');
    expect(calls).toEqual([7001, 7002, 7002]);
    expect(names.known(7001)).toBe('Acme Corp');
  });

  it('a caller whose signal aborts stops waiting at once; the lookup goes on for the others, and the stop gives it up', async () => {
    let answer: (name: string) => void = () => undefined;
    let lookupSignal: AbortSignal | undefined;
    const stop = new AbortController();
    const names = new PartnerNames({
      lookup: (_g, { signal }) => {
        lookupSignal = signal;
        return new Promise((resolve, reject) => {
          answer = resolve;
          signal?.addEventListener('abort', () => reject(signal.reason as Error));
        });
      },
      timeoutMs: 60_000,
      signal: stop.signal,
    });
    const lease = new AbortController();
    const other = names.nameOf(7004);
    const mine = names.nameOf(7004, lease.signal);
    lease.abort(new Error('lease lost'));
    await expect(mine).rejects.toThrow('lease lost');
    expect(lookupSignal?.aborted).toBe(false);
    answer('Acme Corp');
    expect(await other).toBe('Acme Corp');
    // The stop: a lookup under way is given up, its request aborted.
    const pending = names.nameOf(7005);
    stop.abort();
    expect(await pending).toBe('7005');
    expect(lookupSignal?.aborted).toBe(true);
  });

  it('a lookup that never answers costs one deadline, then the grid id; it is aborted and not asked again per parcel', async () => {
    let aborted = false;
    let calls = 0;
    const names = new PartnerNames({
      lookup: (_g, { signal }) =>
        new Promise((_resolve, reject) => {
          calls++;
          signal?.addEventListener('abort', () => {
            aborted = true;
            reject(new Error('aborted'));
          });
        }),
      timeoutMs: 150,
    });
    const t0 = Date.now();
    expect(await names.nameOf(7003)).toBe('7003');
    const took = Date.now() - t0;
    expect(took).toBeGreaterThanOrEqual(140);
    expect(took).toBeLessThan(1500);
    expect(aborted).toBe(true);
    // Answered from the cache, not after another deadline: the lookup is not asked again (a second
    // ask would never answer and count a second call). Not timed: a loaded machine can stall 140 ms.
    expect(await names.nameOf(7003)).toBe('7003');
    expect(calls).toBe(1);
  });

  it('the config map overrides the service, which is then never asked', async () => {
    let calls = 0;
    const names = new PartnerNames({
      lookup: async () => {
        calls++;
        return 'Service Name';
      },
      configured: configuredPartners({ '7001': 'Configured Name' }),
    });
    expect(await names.nameOf(7001)).toBe('Configured Name');
    expect(calls).toBe(0);
  });

  it('a record without a description, and a transport without the call, give the grid id', async () => {
    expect(await new PartnerNames({ lookup: async () => undefined }).nameOf(7001)).toBe('7001');
    expect(await new PartnerNames({}).nameOf(7001)).toBe('7001');
    expect(await new PartnerNames({}).nameOf(null)).toBe('unknown');
  });
});

describe('learntFolder (pure): a learnt name never takes another grid ID’s folder', () => {
  const configured = new Map([[7001, 'ACME']]);
  const free = new Map<string, number>();
  it('a configured partner’s name, in any case or compatibility form, is suffixed with the grid id', () => {
    for (const spoof of ['ACME', 'acme', 'x/../ACME', '\uFF21\uFF23\uFF2D\uFF25'])
      expect(learntFolder(7002, spoof, { configured, claims: free })).toMatch(/-7002$/);
  });
  it('another grid id’s number and the unknown folder are not taken; its own number is', () => {
    expect(learntFolder(7002, '7001', { configured, claims: free })).toBe('7001-7002');
    expect(learntFolder(7002, DEFAULTS.partners.unknownName, { configured, claims: free })).not.toBe(DEFAULTS.partners.unknownName);
    expect(learntFolder(7002, '7002', { configured, claims: free })).toBe('7002');
  });
  it('a folder another sender took first is not shared; with its suffix taken too, the grid id alone', () => {
    const claims = new Map([
      [folderKey('Shared'), 7008],
      [folderKey('Shared-7009'), 7010],
    ]);
    expect(learntFolder(7008, 'Shared', { configured, claims })).toBe('Shared');
    expect(learntFolder(7009, 'sHARED', { configured, claims })).toBe('7009');
    expect(learntFolder(7011, 'SHARED', { configured, claims })).toBe('SHARED-7011');
  });
});
