// Issue 11 #7 over SOAP: an answer that trickles in a byte at a time never trips undici's idle body
// timeout; the SOAP client must still end the call at api.timeouts.callMs instead of holding the
// cycle for ever (a scripted server, not our emulator).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { GridTransportError, SoapClient } from '../../../src/api/index.js';

const servers: http.Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

async function tricklingServer(): Promise<string> {
  const server = http.createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/xml; charset=utf-8' });
    const xml = '<?xml version="1.0"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>';
    let i = 0;
    const timer = setInterval(() => res.write(xml[i++ % xml.length] as string), 100);
    res.on('close', () => clearInterval(timer));
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('SOAP client against a slowloris answer', () => {
  it('ends a non-streamed call at timeouts.callMs with GRIDSYNC_CALL_DEADLINE', async () => {
    const client = new SoapClient({
      url: await tricklingServer(),
      auth: { apiKey: 'k' },
      maxAttempts: 1,
      timeouts: { bodyMs: 60_000, callMs: 1500 },
    });
    const started = Date.now();
    try {
      const err = await client.pendingInbox(1001).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(GridTransportError);
      expect((err as GridTransportError).transportCode).toBe('GRIDSYNC_CALL_DEADLINE');
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      await client.close();
    }
  }, 30_000);
});
