// A proxy on 127.0.0.1 in front of a real service (our emulator) that holds the requests a rule
// picks, the three ways a service stops answering without closing: it accepts and never answers
// (`silent`), answers its headers and never the body (`headers`), or trickles the body a byte at a
// time (`trickle`) — and one way it is merely slow: the request passed on, both its bodies paced at
// `slowBytesPerSecond` (`slow`, a large file across a thin line). Everything else is passed on
// unchanged. A request is named as the service would see it: `METHOD /path` over REST (no query),
// the operation of the SOAPAction header over SOAP.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Transform } from 'node:stream';

export type HangMode = 'silent' | 'headers' | 'trickle' | 'slow';

export interface HeldRequest {
  readonly name: string;
  readonly mode: HangMode;
  readonly at: number;
  /** When the client gave it up (closed its connection), if it has. */
  closedAt: number | undefined;
}

export interface HungProxy {
  readonly url: string;
  /** Decides per request; undefined passes it on. Replaceable at any time. */
  rule: (name: string) => HangMode | undefined;
  /** Every request held so far. */
  readonly held: HeldRequest[];
  /** Every request seen, held or passed on, by name. */
  readonly seen: string[];
  /** The pace of `slow` requests' bodies, both ways. */
  slowBytesPerSecond: number;
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
  const proxy: HungProxy = {
    url: '',
    rule: () => undefined,
    held: [],
    seen: [],
    slowBytesPerSecond: 200_000,
    close: async () => undefined,
  };

  /** Passes each chunk on in tenth-of-a-second slices of the pace. */
  const paced = (): Transform =>
    new Transform({
      transform(chunk: Buffer, _enc, done) {
        const slice = Math.max(1, Math.floor(proxy.slowBytesPerSecond / 10));
        let at = 0;
        const next = (): void => {
          if (at >= chunk.length) return done();
          this.push(chunk.subarray(at, at + slice));
          at += slice;
          const t = setTimeout(() => {
            timers.delete(t);
            next();
          }, 100);
          timers.add(t);
        };
        next();
      },
    });

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
    if (mode && mode !== 'slow') {
      const held: HeldRequest = { name, mode, at: Date.now(), closedAt: undefined };
      proxy.held.push(held);
      res.on('close', () => (held.closedAt ??= Date.now()));
      req.resume();
      hold(mode, res, typeof req.headers.soapaction === 'string');
      return;
    }
    const out = http.request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        if (mode === 'slow') answer.pipe(paced()).pipe(res);
        else answer.pipe(res);
      },
    );
    out.on('error', () => res.destroy());
    if (mode === 'slow') {
      proxy.held.push({ name, mode, at: Date.now(), closedAt: undefined });
      req.pipe(paced()).pipe(out);
    } else req.pipe(out);
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
      for (const t of timers) clearTimeout(t);
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
  return proxy;
}
