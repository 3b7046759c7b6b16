import { afterEach, describe, expect, it } from 'vitest';
import { holdSecrets } from '../../../src/errors/index.js';
import { startHealthServer, type HealthServer } from '../../../src/daemon/http.js';
import { DaemonMetrics } from '../../../src/daemon/metrics.js';

describe('health server (real HTTP on 127.0.0.1)', () => {
  let server: HealthServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('/healthz, /readyz follows the source, /metrics in Prometheus text, 404 and 405', async () => {
    let ready = false;
    const metrics = new DaemonMetrics();
    server = await startHealthServer('127.0.0.1', 0, {
      ready: () => ({ ready, lastSuccessAt: ready ? '2026-11-22T10:00:00.000Z' : null, lastError: ready ? null : 'connect ECONNREFUSED' }),
      metrics: async () => ({ contentType: metrics.registry.contentType, body: await metrics.registry.metrics() }),
    });
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    const down = await fetch(`${server.url}/readyz`);
    expect(down.status).toBe(503);
    expect(await down.json()).toEqual({ ready: false, lastSuccessAt: null, lastError: 'connect ECONNREFUSED' });
    ready = true;
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    metrics.transfers.inc({ direction: 'in', mailbox: 'mb1' }, 3);
    metrics.bytes.inc({ direction: 'in', mailbox: 'mb1' }, 1234);
    const m = await fetch(`${server.url}/metrics?x=1`);
    expect(m.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await m.text();
    expect(text).toContain('gridsync_transfers_total{direction="in",mailbox="mb1"} 3');
    expect(text).toContain('gridsync_transfer_bytes_total{direction="in",mailbox="mb1"} 1234');
    expect(text).toContain('# TYPE gridsync_cycle_duration_seconds histogram');
    expect((await fetch(`${server.url}/nope`)).status).toBe(404);
    expect((await fetch(`${server.url}/healthz`, { method: 'POST' })).status).toBe(405);
    await server.close();
    await server.close(); // safe twice
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
  });

  it('/metrics masks every secret in effect, wherever in the scrape it appears (a label value, an error)', async () => {
    const secret = 'sk-metrics-echo-5Tq9zW';
    holdSecrets([secret]);
    const metrics = new DaemonMetrics();
    let broken = false;
    server = await startHealthServer('127.0.0.1', 0, {
      ready: () => ({ ready: true, lastSuccessAt: null, lastError: null }),
      metrics: async () => {
        if (broken) throw new Error(`collector failed for ${secret}`);
        return { contentType: metrics.registry.contentType, body: await metrics.registry.metrics() };
      },
    });
    metrics.transfers.inc({ direction: 'in', mailbox: `echo ${secret}` }, 2);
    metrics.freeBytes.set({ mailbox: Buffer.from(secret).toString('base64'), folder: 'inbox' }, 1);
    const text = await (await fetch(`${server.url}/metrics`)).text();
    expect(text).toContain('gridsync_transfers_total{direction="in",mailbox="echo ***"} 2');
    expect(text).not.toContain(secret);
    expect(text).not.toContain(Buffer.from(secret).toString('base64'));
    broken = true;
    const failed = await fetch(`${server.url}/metrics`);
    expect(failed.status).toBe(500);
    expect(await failed.text()).toContain('collector failed for ***');
  });
});
