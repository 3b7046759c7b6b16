/** /healthz, /readyz and /metrics on a loopback port (config `http`). */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { GridsyncError, scrubHeld } from '../errors/index.js';

/** The health endpoint cannot listen: which address, why, and what to change. */
export class HealthPortError extends GridsyncError {
  readonly code = 'STARTUP_HTTP_PORT';

  constructor(
    readonly host: string,
    readonly port: number,
    cause: NodeJS.ErrnoException,
  ) {
    super(
      cause.code === 'EADDRINUSE'
        ? `http.port ${port} on ${host} is already in use — another gridsync still running, or another program (ss -ltnp 'sport = :${port}' shows which); stop it or choose another http.port`
        : cause.code === 'EACCES'
          ? `http.port ${port}: not allowed to listen on it (ports below 1024 need privileges); choose a port above 1023`
          : cause.code === 'EADDRNOTAVAIL'
            ? `http.host ${host} is not an address of this machine`
            : `http.host ${host}, http.port ${port}: cannot listen: ${cause.message}`,
      { cause },
    );
  }
}

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
      // Unauthenticated: a reason quoting a secret the service echoed is masked.
      return send(r.ready ? 200 : 503, scrubHeld(JSON.stringify(r)));
    }
    if (url === '/metrics') {
      // Unauthenticated too: a label value may one day carry text from the service (a name, a reason).
      sources.metrics().then(
        (m) => send(200, scrubHeld(m.body), m.contentType),
        (err: unknown) => send(500, scrubHeld(JSON.stringify({ error: (err as Error).message }))),
      );
      return;
    }
    send(404, '{"error":"not found"}');
  });
  server.listen(port, host);
  try {
    await once(server, 'listening');
  } catch (err) {
    throw new HealthPortError(host, port, err as NodeJS.ErrnoException);
  }
  const a = server.address() as AddressInfo;
  return {
    url: `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
