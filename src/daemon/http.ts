/** /healthz, /readyz and /metrics on a loopback port (config `http`). */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HealthServer {
  readonly url: string;
  close(): Promise<void>;
}

export interface HealthSources {
  ready(): { ready: boolean; lastSuccessAt: string | null; lastError: string | null; stuck?: readonly object[] };
  metrics(): Promise<{ contentType: string; body: string }>;
}

export async function startHealthServer(host: string, port: number, sources: HealthSources): Promise<HealthServer> {
  const server = http.createServer((req, res) => {
    const send = (status: number, body: string, type = 'application/json'): void => {
      res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
      res.end(body);
    };
    const url = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET') return send(405, '{"error":"GET only"}');
    if (url === '/healthz') return send(200, '{"status":"ok"}');
    if (url === '/readyz') {
      const r = sources.ready();
      return send(r.ready ? 200 : 503, JSON.stringify(r));
    }
    if (url === '/metrics') {
      sources.metrics().then(
        (m) => send(200, m.body, m.contentType),
        (err: unknown) => send(500, JSON.stringify({ error: (err as Error).message })),
      );
      return;
    }
    send(404, '{"error":"not found"}');
  });
  server.listen(port, host);
  await once(server, 'listening');
  const a = server.address() as AddressInfo;
  return {
    url: `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`,
    close: () => new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
