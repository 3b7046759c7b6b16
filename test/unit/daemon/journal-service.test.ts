// Which service a journal belongs to, and what a start decides about it: the identity is the
// origin of api.baseUrl (or `embedded`), never its path or the protocol; a journal with rows of
// another service is refused with STARTUP_SERVICE_CHANGED, one without rows is taken over.
import { describe, expect, it } from 'vitest';
import { claimJournal, serviceIdentity } from '../../../src/daemon/index.js';

describe('serviceIdentity', () => {
  it('is the origin: scheme, host and port, lowercased; no path, no credentials', () => {
    expect(serviceIdentity('embedded')).toBe('embedded');
    expect(serviceIdentity('HTTPS://Grid.Example.COM/')).toBe('https://grid.example.com');
    expect(serviceIdentity('https://grid.example.com:8443/v4.1/prod/GridOS.asmx')).toBe('https://grid.example.com:8443');
    expect(serviceIdentity('https://op:s3cret@grid.example.com/api')).toBe('https://grid.example.com');
    expect(serviceIdentity('http://127.0.0.1:4010')).toBe('http://127.0.0.1:4010');
  });

  it('tells a test service from production and one port from another', () => {
    expect(serviceIdentity('https://test.grid.example')).not.toBe(serviceIdentity('https://grid.example'));
    expect(serviceIdentity('http://127.0.0.1:4010')).not.toBe(serviceIdentity('http://127.0.0.1:4011'));
    expect(serviceIdentity('https://grid.example:443')).toBe(serviceIdentity('https://grid.example'));
  });
});

/** A journal's meta and whether it holds rows, in memory; `live`: the instances announced on it. */
function journal(service: string | undefined, rows: boolean, live: string[] = []) {
  const meta = new Map<string, string>(service === undefined ? [] : [['service', service]]);
  return {
    location: '/var/lib/gridsync/journal.sqlite',
    leases: { owner: 'me', instances: async () => ['me', ...live] } as never,
    meta,
    getMeta: async (key: string) => meta.get(key),
    setMeta: async (key: string, value: string) => void meta.set(key, value),
    get: async <T>() => (rows ? ({ one: 1 } as T) : undefined),
  };
}

describe('claimJournal', () => {
  const A = 'https://test.grid.example';
  const B = 'https://grid.example';
  const config = { baseUrl: `${B}/v2`, configFile: '/etc/gridsync/gridsync.yaml' };
  const logged: unknown[] = [];
  const logger = { info: (fields: unknown) => void logged.push(fields) };

  it('records the configured service in a journal that has none, and changes nothing when it is the same', async () => {
    const fresh = journal(undefined, true);
    await claimJournal(fresh, config, logger);
    expect(fresh.meta.get('service')).toBe(B);
    await claimJournal(fresh, config, logger);
    expect(fresh.meta.get('service')).toBe(B);
    expect(logged).toEqual([]);
  });

  it('takes over a journal of another service that holds no rows, and logs which it replaced', async () => {
    const empty = journal(A, false);
    await claimJournal(empty, config, logger);
    expect(empty.meta.get('service')).toBe(B);
    expect(logged.splice(0)).toEqual([{ journal: '/var/lib/gridsync/journal.sqlite', from: A, to: B }]);
  });

  it('refuses a journal of another service without rows while instances started for it are live on it', async () => {
    const shared = journal(A, false, ['host-a']);
    const refusal = claimJournal(shared, config, logger);
    await expect(refusal).rejects.toMatchObject({ code: 'STARTUP_SERVICE_CHANGED' });
    expect(((await refusal.catch((e: unknown) => e)) as Error).message).toMatch(/instances started for it are running on it \(host-a\)/);
    expect(shared.meta.get('service')).toBe(A);
  });

  it('refuses a journal with rows of another service, naming the journal, both services and both remedies', async () => {
    const held = journal(A, true);
    const refusal = claimJournal(held, config, logger);
    await expect(refusal).rejects.toMatchObject({ code: 'STARTUP_SERVICE_CHANGED' });
    const message = ((await refusal.catch((e: unknown) => e)) as Error).message;
    expect(message).toContain('journal /var/lib/gridsync/journal.sqlite');
    expect(message).toContain(`service ${A}`);
    expect(message).toContain(`service ${B}`);
    expect(message).toContain('`gridsync once`');
    expect(message).toContain('stateDir');
    expect(message).toContain('`gridsync journal set-service -c /etc/gridsync/gridsync.yaml`');
    expect(held.meta.get('service')).toBe(A);
  });
});
