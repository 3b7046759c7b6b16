/**
 * The callback receiver: an HTTP(S) server on its own port that believes a call only when its path
 * secret and its Basic or Digest credentials match (verify.ts, digest.ts), answers it 200 at once,
 * and only then hands it on. Bounded so a flood cannot hurt the daemon: a connection cap, and a
 * share of it per address; header and body deadlines; a body of at most 64 KiB read only after the
 * caller is verified. A refused request is answered and its connection closed without reading its
 * body; nothing else happens for it.
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Server, Socket } from 'node:net';
import { DEFAULTS } from '../config/defaults.js';
import type { CallbackCredentials } from './credentials.js';
import { DigestAuth, AUTH_REALM } from './digest.js';
import { basicAuthOk, mailboxOfPath } from './verify.js';

const LIMITS = DEFAULTS.callbacks;

/**
 * Why a request was refused: the labels of the refusal metric. `challenged`: a Digest challenge
 * answered to a request without credentials or with an expired nonce — the first half of every
 * Digest call, not an attack.
 */
export const REFUSALS = ['path', 'auth', 'challenged', 'method', 'too-large', 'body'] as const;
export type Refusal = (typeof REFUSALS)[number];

export interface ReceiverOptions {
  readonly host: string;
  readonly port: number;
  readonly tls?: { readonly cert: Buffer; readonly key: Buffer } | undefined;
  readonly credentials: CallbackCredentials;
  /** A verified call, after its 200 went out. `body` is the parsed JSON, or undefined when it is not JSON. */
  readonly onCall: (mailboxId: number, body: unknown) => void;
  readonly onRefused?: (why: Refusal) => void;
}

export interface Receiver {
  /** The address it listens on (`http(s)://host:port`). */
  readonly url: string;
  close(): Promise<void>;
}

function refuse(res: http.ServerResponse, status: number, headers: Record<string, string | string[]> = {}): void {
  res.shouldKeepAlive = false;
  res.writeHead(status, { 'content-type': 'text/plain', connection: 'close', ...headers }).end(`${status}\n`);
}

/** Reads at most `max` bytes within `timeoutMs`; undefined when the body is larger, late or broken off. */
function readBody(req: http.IncomingMessage, max: number, timeoutMs: number): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (v: Buffer | undefined): void => {
      clearTimeout(timer);
      req.removeAllListeners('data');
      resolve(v);
    };
    const timer = setTimeout(() => done(undefined), timeoutMs);
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > max) return done(undefined);
      chunks.push(c);
    });
    req.on('end', () => done(Buffer.concat(chunks)));
    req.on('error', () => done(undefined));
    req.on('aborted', () => done(undefined));
  });
}

function parse(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/** Closes at once a connection from an address that already holds `max` (before TLS or any byte is read). */
function limitPerPeer(server: Server, max: number): void {
  const held = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const peer = socket.remoteAddress ?? '';
    const n = (held.get(peer) ?? 0) + 1;
    if (n > max) return void socket.destroy();
    held.set(peer, n);
    socket.once('close', () => {
      const left = (held.get(peer) ?? 1) - 1;
      if (left > 0) held.set(peer, left);
      else held.delete(peer);
    });
  });
}

/** `host:port` (IPv6 in brackets) of `callbacks.listen`. */
export function splitListen(listen: string): { host: string; port: number } {
  const i = listen.lastIndexOf(':');
  return { host: listen.slice(0, i).replace(/^\[|\]$/g, ''), port: Number(listen.slice(i + 1)) };
}

/** Starts the receiver; resolves once it listens. */
export async function startReceiver(o: ReceiverOptions): Promise<Receiver> {
  const digest = o.credentials.auth === 'digest' ? new DigestAuth({ now: Date.now }) : undefined;
  const handle = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    const mailboxId = mailboxOfPath(req.url ?? '', o.credentials);
    // The authorization is checked even for a wrong path (recording nothing then): both refusals take alike long.
    const verdict = digest
      ? digest.verify(req.headers.authorization, req.method ?? '', req.url ?? '', o.credentials, mailboxId !== undefined)
      : basicAuthOk(req.headers.authorization, o.credentials)
        ? 'ok'
        : 'refused';
    if (mailboxId === undefined) return (o.onRefused?.('path'), refuse(res, 404));
    if (verdict !== 'ok') {
      o.onRefused?.(verdict === 'stale' || (digest && req.headers.authorization === undefined) ? 'challenged' : 'auth');
      return refuse(res, 401, { 'www-authenticate': digest ? digest.challenge(verdict === 'stale') : `Basic realm="${AUTH_REALM}"` });
    }
    if (req.method !== 'POST') return (o.onRefused?.('method'), refuse(res, 405, { allow: 'POST' }));
    if (Number(req.headers['content-length'] ?? 0) > LIMITS.maxBodyBytes) return (o.onRefused?.('too-large'), refuse(res, 413));
    const body = await readBody(req, LIMITS.maxBodyBytes, LIMITS.bodyTimeoutMs);
    if (body === undefined) return (o.onRefused?.('body'), refuse(res, 413));
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
    // The answer first: the service wants its 200 quickly, whatever the daemon does next.
    setImmediate(() => o.onCall(mailboxId, parse(body)));
  };
  const options: http.ServerOptions = {
    headersTimeout: LIMITS.headersTimeoutMs,
    requestTimeout: LIMITS.headersTimeoutMs + LIMITS.bodyTimeoutMs,
    keepAliveTimeout: LIMITS.headersTimeoutMs,
    maxHeaderSize: 8 * 1024,
    connectionsCheckingInterval: 1000,
  };
  const listener = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    handle(req, res).catch(() => res.destroy());
  };
  const server = o.tls
    ? https.createServer({ ...options, cert: o.tls.cert, key: o.tls.key, handshakeTimeout: LIMITS.headersTimeoutMs }, listener)
    : http.createServer(options, listener);
  server.maxConnections = LIMITS.maxConnections;
  limitPerPeer(server, LIMITS.maxConnectionsPerPeer);
  server.maxHeadersCount = 64;
  // An idle or trickling socket is cut, whatever stage it is in.
  server.setTimeout(LIMITS.headersTimeoutMs + LIMITS.bodyTimeoutMs, (socket) => socket.destroy());
  server.on('clientError', (_err, socket) => socket.destroy());
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    url: `${o.tls ? 'https' : 'http'}://${host}:${addr.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
