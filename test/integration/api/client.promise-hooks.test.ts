// Calls through the client leave the process without promise hooks (issue #27: CPU per item). An
// AsyncLocalStorage in use on Node 20 hooks every promise of the process — the journal's, the
// files', the pipelines' — which cost more CPU per parcel than the debug line it fed. Checked the
// way Node shows it: with hooks on, a promise continuation runs under an async id; without, id 0.
import { executionAsyncId } from 'node:async_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import { GridClient } from '../../../src/api/index.js';
import { startScriptedService } from '../../helpers/scripted-service.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const continuationId = async (): Promise<number> => {
  await new Promise((r) => setTimeout(r, 1));
  await null;
  return executionAsyncId();
};

describe('client: no promise hooks', () => {
  it('after a call, promise continuations run without an async id', async () => {
    expect(await continuationId()).toBe(0); // the runner itself hooks nothing
    const svc = await startScriptedService();
    const client = new GridClient({ baseUrl: svc.url, auth: { apiKey: svc.apiKey }, sleep: async () => undefined });
    cleanups.push(
      () => svc.close(),
      () => client.close(),
    );
    await client.pendingInbox(1001);
    expect(await continuationId()).toBe(0);
  });
});
