/**
 * The emulator's HTTP server: node:http, requests resolved by the shared catalog's matcher (every
 * path and alias), the envelope and statuses of docs/wire.md, auth, AuthLevel checks, fault
 * injection, and the admin routes outside /v2 that tests and the soak harness use.
 *
 * node:http rather than a framework: fault injection needs the raw socket (reset before or after
 * the handler, cut a body in the middle), and fastify 5 needs Node 22 through its test injector.
 */
import { once } from 'node:events';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import type { z } from 'zod';
import { matchEndpoint, type EndpointDef } from '@gridsync/protocol/catalog';
import { ERROR_STATUS, type ErrorCode } from '@gridsync/protocol/wire';
import { EmulatorError, accessDenied, atLeast, invalidParameter, iso, type HandlerResult, type World } from './context.js';
import { sendPlanned, type FaultInjector, type FaultPlan } from './faults.js';
import { HANDLERS } from './handlers/index.js';
import { SoapEndpoint } from './soap/endpoint.js';
import { discardContent, receiveContentBody } from './content.js';
import { deliver, parcelInfo } from './parcels.js';
import { MAX_JSON_BYTES, readBoundedText } from './request-body.js';
import type { ParcelRow, UserRow } from './store.js';
import { InternalError } from '@gridsync/protocol/errors';

const REQUEST_LOG_SIZE = 2000;
const NUMERIC_PARAM = /Id$/;

export interface RequestRecord {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly at: string;
  readonly endpoint?: string;
}

export interface RateLimit {
  /** Sustained requests per second per credential. */
  readonly perSecond: number;
  readonly burst: number;
}

export interface ServerOptions {
  /** The /_emulator routes. */
  readonly admin: boolean;
  /**
   * Admin routes for callers off this machine too; they must then send the Root user's key as
   * X-API-Key. Off by default: from anywhere but loopback the admin routes answer 404.
   */
  readonly remoteAdmin?: boolean;
  readonly rateLimit?: RateLimit;
  /** Anything unexpected (a handler bug, a failed background task): reported here, never thrown. */
  readonly onError: (err: unknown, context: string) => void;
}

/** Addresses of this machine: the admin routes answer them only, unless remoteAdmin. */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  return address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');
}

/**
 * Who may use the admin routes (inject, faults, request log): nobody when they are off; loopback
 * callers when on; callers from other hosts only with remote admin enabled and the Root key.
 */
export function adminAccess(a: {
  admin: boolean;
  remoteAdmin: boolean;
  remoteAddress: string | undefined;
  rootKey: boolean;
}): 'allow' | 'hidden' | 'needs-root-key' {
  if (!a.admin) return 'hidden';
  if (isLoopback(a.remoteAddress)) return 'allow';
  if (!a.remoteAdmin) return 'hidden';
  return a.rootKey ? 'allow' : 'needs-root-key';
}

/** SQLite's own uniqueness checks are the last line behind the handlers' duplicate checks. */
function isConstraintError(err: unknown): boolean {
  return typeof (err as { code?: unknown }).code === 'string' && (err as { code: string }).code.startsWith('SQLITE_CONSTRAINT');
}

export class EmulatorServer {
  readonly faults: FaultInjector;
  private readonly soap: SoapEndpoint;
  private readonly server: http.Server;
  private readonly log: RequestRecord[] = [];
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly world: World,
    private readonly options: ServerOptions,
  ) {
    this.faults = world.faults;
    this.soap = new SoapEndpoint(world, this.faults, { admin: options.admin });
    this.server = http.createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        this.options.onError(err, `${req.method ?? ''} ${req.url ?? ''}`);
        res.destroy();
      });
    });
    this.server.keepAliveTimeout = 60_000;
    // A malformed request line or headers, or a client gone mid-request: close that socket only.
    this.server.on('clientError', (_err, socket) => socket.destroy());
  }

  async listen(host: string, port: number): Promise<string> {
    this.server.listen(port, host);
    await once(this.server, 'listening');
    const a = this.server.address() as AddressInfo;
    return `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`;
  }

  requests(): RequestRecord[] {
    return [...this.log];
  }

  async close(): Promise<void> {
    if (!this.server.listening) return;
    const closed = new Promise((r) => this.server.close(r));
    this.server.closeAllConnections();
    await closed;
  }

  private record(req: IncomingMessage, status: number, endpoint?: string): void {
    this.log.push({ method: req.method ?? '', path: req.url ?? '', status, at: iso(this.world.now()), ...(endpoint ? { endpoint } : {}) });
    if (this.log.length > REQUEST_LOG_SIZE) this.log.splice(0, this.log.length - REQUEST_LOG_SIZE);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://emulator');
    try {
      if (this.soap.owns(url.pathname)) return await this.soap.handle(req, res, url);
      if (url.pathname.startsWith('/_emulator/')) {
        this.adminAllowed(req);
        await this.admin(req, res, url);
        return;
      }
      // The catalog's own matcher: the client and the emulator resolve a path the same way.
      const found = matchEndpoint(req.method ?? '', url.pathname);
      if (!found) throw new EmulatorError(404, 'ObjectNotFound', `no endpoint ${req.method ?? ''} ${url.pathname}`);
      await this.endpoint(req, res, url, found.endpoint, found.params);
    } catch (err) {
      this.fail(req, res, err);
    }
  }

  private async endpoint(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    endpoint: EndpointDef,
    params: Record<string, string | undefined>,
  ): Promise<void> {
    const plan = this.faults.plan(endpoint.name);
    if (plan.latencyMs > 0) await delay(plan.latencyMs);
    if (plan.resetBefore) {
      this.record(req, 0, endpoint.name);
      req.socket.resetAndDestroy();
      return;
    }
    if (plan.status) {
      const code: ErrorCode | null = plan.status === 429 ? 'RateLimitExceeded' : plan.status === 500 ? 'InternalError' : null;
      req.resume();
      this.reply(
        req,
        res,
        plan.status,
        { success: false, data: null, errorCode: code, message: 'injected fault' },
        endpoint.name,
        plan,
        plan.retryAfter,
      );
      return;
    }
    const caller = endpoint.auth ? this.authenticate(req) : null;
    if (caller) this.rateLimit(req, caller);
    if (caller && endpoint.minLevel && !atLeast(caller, endpoint.minLevel)) {
      throw accessDenied(`${endpoint.name} needs ${endpoint.minLevel} or higher`);
    }
    // Validate first: a bad request to an endpoint the emulator does not implement still names its field.
    const input = endpoint.name === 'parcels.upload' ? {} : await this.input(req, url, endpoint, params);
    const handler = HANDLERS[endpoint.name];
    if (!handler) throw new InternalError(`no handler for ${endpoint.name}`);
    const result: HandlerResult = await handler({ world: this.world, endpoint, input, caller, req, plan });
    if (plan.resetAfter) {
      this.record(req, 0, endpoint.name);
      req.socket.resetAndDestroy();
      return;
    }
    if ('stream' in result) {
      this.record(req, 200, endpoint.name);
      await result.stream(res);
      return;
    }
    this.reply(
      req,
      res,
      200,
      { success: true, data: result.data ?? null, errorCode: null, message: result.message ?? null },
      endpoint.name,
      plan,
    );
  }

  /** Path params, then the query (GET) or the JSON body, validated with the endpoint's request schema. */
  private async input(
    req: IncomingMessage,
    url: URL,
    endpoint: EndpointDef,
    params: Record<string, string | undefined>,
  ): Promise<Record<string, unknown>> {
    let fields: Record<string, unknown> = {};
    if (endpoint.method === 'GET') {
      for (const [k, v] of url.searchParams)
        fields[k] = /^-?\d+$/.test(v) && v.length < 16 ? Number(v) : v === 'true' ? true : v === 'false' ? false : v;
      req.resume();
    } else {
      const text = await readBoundedText(req, MAX_JSON_BYTES);
      if (text.trim() !== '') {
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          throw invalidParameter('body: malformed JSON');
        }
        if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw invalidParameter('body: must be a JSON object');
        fields = parsed as Record<string, unknown>;
      }
    }
    for (const [k, v] of Object.entries(params)) {
      if (v !== undefined) fields[k] = NUMERIC_PARAM.test(k) ? Number(v) : v;
    }
    const parsed = (endpoint.request as z.ZodType).safeParse(fields);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw invalidParameter(`${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid'}`);
    }
    return parsed.data as Record<string, unknown>;
  }

  private authenticate(req: IncomingMessage): UserRow {
    const { db } = this.world.store;
    const key = req.headers['x-api-key'];
    if (typeof key === 'string') {
      // The user's own key, or a key created with keys.create that is not deleted or expired.
      const u = (db.prepare("SELECT * FROM users WHERE api_key = ? AND status = 'Active'").get(key) ??
        db
          .prepare(
            `SELECT u.* FROM api_keys k JOIN users u ON u.user_id = k.user_id
               WHERE k.key = ? AND k.revoked = 0 AND (k.expires_at IS NULL OR k.expires_at > ?) AND u.status = 'Active'`,
          )
          .get(key, this.world.now())) as UserRow | undefined;
      if (!u) throw new EmulatorError(401, 'InvalidAPIKey', 'X-API-Key is not recognized');
      return u;
    }
    const bearer = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
    if (!bearer) throw new EmulatorError(401, 'InvalidSession', 'no credentials: send X-API-Key or Authorization: Bearer');
    const t = db.prepare('SELECT user_id, expires_at FROM tokens WHERE token = ? AND alive = 1').get(bearer) as
      { user_id: number; expires_at: number } | undefined;
    if (!t || t.expires_at <= this.world.now()) throw new EmulatorError(401, 'InvalidSession', 'the session token is expired or not valid');
    const u = this.world.store.user(t.user_id);
    if (!u || u.status !== 'Active') throw new EmulatorError(401, 'InvalidSession', 'the session’s user is not active');
    return u;
  }

  private rateLimit(req: IncomingMessage, caller: UserRow): void {
    const limit = this.options.rateLimit;
    if (!limit) return;
    const now = this.world.now();
    const b = this.buckets.get(String(caller.user_id)) ?? { tokens: limit.burst, at: now };
    b.tokens = Math.min(limit.burst, b.tokens + ((now - b.at) / 1000) * limit.perSecond);
    b.at = now;
    this.buckets.set(String(caller.user_id), b);
    if (b.tokens < 1) {
      req.resume();
      throw Object.assign(new EmulatorError(429, 'RateLimitExceeded', 'too many requests'), {
        retryAfter: String(Math.ceil((1 - b.tokens) / limit.perSecond)),
      });
    }
    b.tokens -= 1;
  }

  private fail(req: IncomingMessage, res: ServerResponse, err: unknown): void {
    if (res.headersSent || !res.socket || res.socket.destroyed) {
      res.destroy();
      return;
    }
    // An unread request body (too large, broken off, refused early): answer, then close the connection.
    if (!req.complete) res.setHeader('connection', 'close');
    if (err instanceof EmulatorError) {
      const retryAfter = (err as EmulatorError & { retryAfter?: string }).retryAfter;
      this.reply(
        req,
        res,
        err.status,
        { success: false, data: null, errorCode: err.errorCode, message: err.message },
        undefined,
        undefined,
        retryAfter,
      );
      return;
    }
    if (isConstraintError(err)) {
      this.reply(req, res, 400, {
        success: false,
        data: null,
        errorCode: 'DuplicateObject',
        message: 'an object with the same key already exists',
      });
      return;
    }
    this.options.onError(err, `${req.method ?? ''} ${req.url ?? ''}`);
    const status = ERROR_STATUS.InternalError;
    this.reply(req, res, status, { success: false, data: null, errorCode: 'InternalError', message: 'internal error of the emulator' });
  }

  private reply(
    req: IncomingMessage,
    res: ServerResponse,
    status: number,
    body: unknown,
    endpoint?: string,
    plan?: FaultPlan,
    retryAfter?: string,
  ): void {
    this.record(req, status, endpoint);
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (retryAfter) headers['retry-after'] = retryAfter;
    sendPlanned(res, status, headers, JSON.stringify(body), plan);
  }

  // ------------------------------------------------------------------ admin routes

  private adminAllowed(req: IncomingMessage): void {
    const key = req.headers['x-api-key'];
    const rootKey =
      typeof key === 'string' &&
      this.world.store.db.prepare("SELECT 1 FROM users WHERE api_key = ? AND auth_level = 'Root' AND status = 'Active'").get(key) !==
        undefined;
    const access = adminAccess({
      admin: this.options.admin,
      remoteAdmin: this.options.remoteAdmin ?? false,
      remoteAddress: req.socket.remoteAddress,
      rootKey,
    });
    if (access === 'hidden') throw new EmulatorError(404, 'ObjectNotFound', 'admin routes are disabled');
    if (access === 'needs-root-key')
      throw new EmulatorError(401, 'InvalidAPIKey', 'admin routes from another host need the Root user’s X-API-Key');
  }

  private async admin(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const route = `${req.method ?? ''} ${url.pathname}`;
    const ok = (data: unknown): void => this.reply(req, res, 200, { success: true, data, errorCode: null, message: null });
    switch (route) {
      case 'POST /_emulator/inject': {
        const { fields, content } = await receiveContentBody(this.world, req, this.world.settings.maxUploadBytes);
        try {
          ok({ parcelId: this.inject(fields, content) });
        } catch (err) {
          discardContent(this.world, content);
          throw err;
        }
        return;
      }
      case 'POST /_emulator/faults': {
        let cfg: unknown;
        try {
          cfg = JSON.parse((await readBoundedText(req, MAX_JSON_BYTES)) || '{}');
          this.faults.set(cfg);
        } catch (err) {
          throw invalidParameter(`faults: ${(err as Error).message}`);
        }
        ok({ config: this.faults.current, injected: this.faults.injected });
        return;
      }
      case 'GET /_emulator/faults':
        ok({ config: this.faults.current, injected: this.faults.injected });
        return;
      case 'GET /_emulator/requests':
        ok(this.requests());
        return;
      case 'GET /_emulator/parcels': {
        const mailboxId = url.searchParams.get('mailboxId');
        const rows = (
          mailboxId
            ? this.world.store.db.prepare('SELECT * FROM parcels WHERE mailbox_id = ? ORDER BY parcel_id').all(Number(mailboxId))
            : this.world.store.db.prepare('SELECT * FROM parcels ORDER BY parcel_id').all()
        ) as ParcelRow[];
        ok(rows.map((p) => ({ ...parcelInfo(p), direction: p.direction, sha256: p.sha256, mailbagControlId: p.mailbag_control_id })));
        return;
      }
      default:
        throw new EmulatorError(404, 'ObjectNotFound', `no admin route ${route}`);
    }
  }

  /** A parcel arrives in `mailboxId` as if a trading partner had sent it. */
  inject(fields: Record<string, unknown>, content: Parameters<typeof deliver>[1]['content'] | undefined): number {
    if (!content) throw invalidParameter('content: required');
    const mailboxId = Number(fields.mailboxId);
    if (!Number.isInteger(mailboxId) || mailboxId <= 0) throw invalidParameter('mailboxId: required');
    const fileName = typeof fields.fileName === 'string' ? fields.fileName : '';
    const gridIdFrom = typeof fields.gridIdFrom === 'number' ? fields.gridIdFrom : null;
    const gridIdTo = typeof fields.gridIdTo === 'number' ? fields.gridIdTo : null;
    // A partner outside the emulated world: no sender mailbox, so no route check; the grid IDs are recorded as given.
    return deliver(this.world, { fromMailbox: null, fileName, content, gridIdFrom, gridIdTo, toMailbox: mailboxId }).inParcelId;
  }
}
