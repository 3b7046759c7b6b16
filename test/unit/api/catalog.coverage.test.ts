import { describe, expect, it } from 'vitest';
import {
  ALL_ENDPOINTS,
  ENDPOINT_GROUPS,
  SPEC_GROUP_COUNTS,
  catalog,
  endpointByName,
  matchEndpoint,
  pathParams,
} from '@gridsync/protocol/catalog';

describe('endpoint catalog', () => {
  it('has exactly the per-group counts of the service (docs/wire.md#catalog), 119 in all', () => {
    const counts = Object.fromEntries(ENDPOINT_GROUPS.map((g) => [g, ALL_ENDPOINTS.filter((e) => e.group === g).length]));
    console.table(ENDPOINT_GROUPS.map((g) => ({ group: g, spec: SPEC_GROUP_COUNTS[g], catalog: counts[g] })));
    expect(counts).toEqual(SPEC_GROUP_COUNTS);
    expect(ALL_ENDPOINTS).toHaveLength(119);
  });

  it('has unique names and unique method+path forms, aliases included', () => {
    const names = ALL_ENDPOINTS.map((e) => e.name);
    expect(new Set(names).size).toBe(names.length);
    const forms = ALL_ENDPOINTS.flatMap((e) => [e, ...(e.aliases ?? [])].map((f) => `${f.method} ${f.path.replace(/\{\w+\}/g, '{}')}`));
    expect(new Set(forms).size).toBe(forms.length);
    for (const e of ALL_ENDPOINTS) expect(endpointByName(e.name)).toBe(e);
  });

  it('declares every path parameter in the request schema', () => {
    for (const e of ALL_ENDPOINTS) {
      const shape = e.request as unknown as { shape?: Record<string, unknown>; def?: { in?: { shape?: Record<string, unknown> } } };
      const fields = shape.shape ?? shape.def?.in?.shape ?? {};
      for (const f of [e, ...(e.aliases ?? [])])
        for (const p of pathParams(f.path)) expect(Object.keys(fields), `${e.name} ${f.path}`).toContain(p);
    }
  });

  it('routes literal segments before parameters (docs/wire.md#routing-traps)', () => {
    expect(matchEndpoint('GET', '/v2/users/me')?.endpoint.name).toBe('users.me');
    expect(matchEndpoint('GET', '/v2/users/17')).toEqual({ endpoint: catalog.users.get, params: { userId: '17' } });
    expect(matchEndpoint('GET', '/v2/users/key/17')?.endpoint.name).toBe('users.key');
    expect(matchEndpoint('GET', '/v2/users/17/api-key')?.endpoint.name).toBe('users.key');
    expect(matchEndpoint('GET', '/v2/reports/mailbox-stats')?.endpoint.name).toBe('reports.mailboxStats');
    expect(matchEndpoint('GET', '/v2/reports/false')).toEqual({ endpoint: catalog.reports.list, params: { showInactive: 'false' } });
    expect(matchEndpoint('GET', '/v2/reports/sometimes')).toBeUndefined();
    expect(matchEndpoint('POST', '/v2/parcels/12/reset-to-inbox')?.endpoint.name).toBe('parcels.resetToInbox');
    expect(matchEndpoint('POST', '/v2/parcels/reset-to-inbox/12')?.params).toEqual({ parcelId: '12' });
    expect(matchEndpoint('GET', '/v2/parcels/abc')).toBeUndefined();
    expect(matchEndpoint('DELETE', '/v2/callbacks')?.endpoint.name).toBe('callbacks.delete');
    expect(matchEndpoint('GET', '/v2/callbacks/get-queue-by-id?callbackId=3')?.endpoint.name).toBe('callbacks.getQueueById');
    expect(matchEndpoint('PATCH', '/v2/users/me')).toBeUndefined();
  });

  it('rejects constraint violations in requests and keeps unknown fields in responses', () => {
    expect(catalog.networks.list.request.safeParse({ recordsPerPage: 501 }).success).toBe(false);
    expect(catalog.networks.list.request.safeParse({ pageNo: 0 }).success).toBe(false);
    expect(catalog.networks.list.request.safeParse({ pageNo: 1, recordsPerPage: 500, extra: 'ignored' }).success).toBe(true);
    expect(catalog.carbonCopies.list.request.safeParse({ recordsPerPage: 1000 }).success).toBe(true);
    expect(catalog.carbonCopies.list.request.safeParse({ recordsPerPage: 1001 }).success).toBe(false);
    expect(
      catalog.networks.x12Delimiters.request.safeParse({
        networkId: 1,
        elementDelimiter: '**',
        subElementDelimiter: '>',
        segmentTerminator: '~',
      }).success,
    ).toBe(false);
    expect(
      catalog.reports.trafficStats.request.safeParse({ targetTime: '2026-11-01T00:00:00Z', numPeriods: 0, period: 'Day' }).success,
    ).toBe(false);
    expect(
      catalog.reports.trafficStats.request.safeParse({ targetTime: '2026-11-01T00:00:00Z', numPeriods: 3, period: 'Fortnight' }).success,
    ).toBe(false);
    expect(catalog.users.password.request.safeParse({ userId: 1, newPassword: 'alllower1!' }).success).toBe(false);
    expect(catalog.users.password.request.safeParse({ userId: 1, newPassword: 'Good-pass1' }).success).toBe(true);
    expect(catalog.callbacks.create.request.safeParse({ url: 'http://x.example/cb', event: 'Parcel' }).success).toBe(false);
    const parcel = catalog.parcels.get.response.parse({
      parcelId: 5,
      mailboxId: 1,
      networkId: 1,
      fileName: 'a',
      bytes: 1,
      status: 'SomeFutureStatus',
      created: '2026-11-01T00:00:00Z',
      brandNew: 1,
    }) as Record<string, unknown>;
    expect(parcel.status).toBe('SomeFutureStatus');
    expect(parcel.brandNew).toBe(1);
  });
});
