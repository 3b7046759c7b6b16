// A scripted HTTP server on 127.0.0.1 for client tests: each request is answered by the next
// responder in the script (the last one repeats), and every request is recorded with its body.
import { once } from 'node:events';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export type Responder = (req: IncomingMessage, res: ServerResponse, body: string) => void | Promise<void>;

export interface ScriptedServer {
  url: string;
  requests: RecordedRequest[];
  script(...responders: Responder[]): void;
  close(): Promise<void>;
}

export const envelope =
  (data: unknown, status = 200, extra: Record<string, string> = {}): Responder =>
  (_req, res) => {
    const text = JSON.stringify({
      success: status < 400,
      data: status < 400 ? data : null,
      errorCode: status < 400 ? null : data,
      message: status < 400 ? null : `error ${status}`,
    });
    res.writeHead(status, { 'content-type': 'application/json', ...extra });
    res.end(text);
  };

export const raw =
  (status: number, text: string, headers: Record<string, string> = { 'content-type': 'application/json' }): Responder =>
  (_req, res) => {
    res.writeHead(status, headers);
    res.end(text);
  };

/** Destroys the connection without an answer (a reset). */
export const reset: Responder = (req) => {
  req.socket.resetAndDestroy();
};

export async function startScriptedServer(): Promise<ScriptedServer> {
  let responders: Responder[] = [];
  const requests: RecordedRequest[] = [];
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
    const r = responders.length > 1 ? responders.shift() : responders[0];
    if (!r) {
      res.writeHead(500).end();
      return;
    }
    await r(req, res, body);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    script: (...r) => {
      responders = r;
    },
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
