// A proxy on 127.0.0.1 in front of a real service (our emulator) that holds the requests a rule
// picks, the three ways a service stops answering without closing: it accepts and never answers
// (`silent`), answers its headers and never the body (`headers`), or trickles the body a byte at a
// time (`trickle`). Everything else is passed on unchanged. A request is named as the service would
// see it: `METHOD /path` over REST (no query), the operation of the SOAPAction header over SOAP.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type HangMode = 'silent' | 'headers' | 'trickle';

export interface HeldRequest {
  readonly name: string;
  readonly mode: HangMode;
  readonly at: number;
}

export interface HungProxy {
  readonly url: string;
  /** Decides per request; undefined passes it on. Replaceable at any time. */
  rule: (name: string) => HangMode | undefined;
  /** Every request held so far. */
  readonly held: HeldRequest[];
  /** Every request seen, held or passed on, by name. */
  readonly seen: string[];
  close(): Promise<void>;
}

/** `POST /v2/parcels/download`, or the SOAP operation (`ParcelDownload`). */
function nameOf(req: IncomingMessage): string {
  const action = req.headers.soapaction;
  if (typeof action === 'string' && action !== '') return action.replace(/"/g, '').split('/').pop() ?? action;
  return `${req.method ?? 'GET'} ${(req.url ?? '/').split('?')[0]}`;
}

export async function startHungProxy(target: string): Promise<HungProxy> {
  const upstream = new URL(target);
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const proxy: HungProxy = { url: '', rule: () => undefined, held: [], seen: [], close: async () => undefined };

  const hold = (mode: HangMode, res: ServerResponse, soap: boolean): void => {
    if (mode === 'silent') return;
    const type = soap ? 'text/xml; charset=utf-8' : 'application/json';
    if (mode === 'headers') {
      res.writeHead(200, { 'content-type': type, 'content-length': '1000000' });
      res.flushHeaders();
      return;
    }
    res.writeHead(200, { 'content-type': type });
    // Whitespace is allowed before JSON and inside XML: a reader keeps waiting for more.
    const t = setInterval(() => res.write(' '), 100);
    timers.add(t);
    res.on('close', () => {
      clearInterval(t);
      timers.delete(t);
    });
  };

  const server = http.createServer((req, res) => {
    const name = nameOf(req);
    proxy.seen.push(name);
    const mode = proxy.rule(name);
    if (mode) {
      proxy.held.push({ name, mode, at: Date.now() });
      req.resume();
      hold(mode, res, typeof req.headers.soapaction === 'string');
      return;
    }
    const out = http.request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  Object.assign(proxy, {
    url: `http://127.0.0.1:${port}${upstream.pathname === '/' ? '' : upstream.pathname}`,
    close: async () => {
      for (const t of timers) clearInterval(t);
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
  return proxy;
}
