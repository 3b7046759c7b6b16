// Many calls in flight under one abort signal (a cycle's, the daemon's) are normal use, not a
// leak: node must not print a MaxListenersExceededWarning (it reached a cron job's mail from
// every `once` that had more than ten calls in flight). Aborting still ends every call.
import { afterEach, describe, expect, it } from 'vitest';
import { GridClient } from '../../../src/api/index.js';
import { startScriptedService } from '../../helpers/scripted-service.js';

const IN_FLIGHT = 24;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('client: one signal shared by many calls', () => {
  it(`${IN_FLIGHT} calls in flight under one signal: no listener-leak warning, and an abort ends them all`, async () => {
    const svc = await startScriptedService();
    const client = new GridClient({ baseUrl: svc.url, auth: { apiKey: svc.apiKey }, connections: IN_FLIGHT, sleep: async () => undefined });
    const warnings: Error[] = [];
    const onWarning = (w: Error): void => void warnings.push(w);
    process.on('warning', onWarning);
    cleanups.push(
      () => svc.close(),
      () => client.close(),
      () => void process.off('warning', onWarning),
    );
    const shared = new AbortController();
    await Promise.all(Array.from({ length: IN_FLIGHT }, () => client.pendingInbox(1001, { signal: shared.signal })));
    await new Promise((r) => setTimeout(r, 20)); // warnings are emitted on a later tick
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);

    // The answers held back: aborting the shared signal ends every call in flight.
    svc.variants.fault = () => new Promise<boolean>(() => undefined);
    const calls = Array.from({ length: IN_FLIGHT }, () =>
      client.pendingInbox(1001, { signal: shared.signal }).then(
        () => 'answered',
        (e: Error) => e.name,
      ),
    );
    await new Promise((r) => setTimeout(r, 50));
    shared.abort();
    expect(new Set(await Promise.all(calls))).toEqual(new Set(['AbortError']));
  });
});
