/**
 * Credentials of the REST client: an API key sent as `X-API-Key`, or a login that becomes a bearer
 * session — refreshed before it expires, one re-login when the service calls it invalid.
 */
import { catalog } from '@gridsync/protocol/catalog';
import { GridApiError, GridConfigError } from './errors.js';
import type { Credentials } from './retry-loop.js';
import { SecretsSeen } from './secrets-seen.js';
import { waitShared } from './shared-wait.js';
import type { LoginResult } from '@gridsync/protocol/wire';
import { errorFields } from '../errors/index.js';

const authEndpoints = catalog.auth;

export type GridAuth = { readonly apiKey: string } | { readonly login: string; readonly password: string };

export type TokenEndpoint = typeof authEndpoints.login | typeof authEndpoints.refresh;

export interface SessionLogger {
  warn(obj: object, msg: string): void;
}

interface BearerSession {
  readonly token: string;
  readonly refreshToken?: string;
  readonly issuedAt: number;
  readonly expiresAt: number;
}

/** Lifetime assumed when the service's `expiresAt` cannot be read. */
const FALLBACK_LIFETIME_MS = 5 * 60_000;

export class Session implements Credentials<Record<string, string>> {
  private bearerSession: BearerSession | undefined;
  private pending: Promise<BearerSession> | undefined;
  private readonly seen: SecretsSeen;

  constructor(
    private readonly auth: GridAuth,
    /** Sends a login or refresh request (without auth headers) and returns its validated data. */
    private readonly tokenCall: (endpoint: TokenEndpoint, body: Record<string, unknown>) => Promise<LoginResult>,
    private readonly now: () => number,
    private readonly logger?: SessionLogger,
  ) {
    if ('apiKey' in auth ? !auth.apiKey : !auth.login || !auth.password) {
      throw new GridConfigError('no credentials: give an API key, or login and password', 'client');
    }
    this.seen = new SecretsSeen(auth);
  }

  /** The headers that authenticate one request (the header name spelled as the service documents it). */
  async current(signal?: AbortSignal): Promise<Record<string, string>> {
    if ('apiKey' in this.auth) return { 'X-API-Key': this.auth.apiKey };
    const s = await waitShared(this.bearer(), signal);
    return { authorization: `Bearer ${s.token}` };
  }

  secrets(): readonly string[] {
    return this.seen.values();
  }

  /** True when `err` says the bearer token is no longer valid and a fresh login may cure it. */
  isExpired(err: unknown): boolean {
    return 'login' in this.auth && err instanceof GridApiError && err.httpStatus === 401 && err.errorCode === 'InvalidSession';
  }

  /** Forgets the bearer token: the next request logs in again. */
  invalidate(): void {
    this.bearerSession = undefined;
  }

  /** The bearer token to end at close, if any; the session forgets it. */
  takeForLogout(): string | undefined {
    const token = this.bearerSession?.token;
    this.bearerSession = undefined;
    return token;
  }

  /** A valid bearer session: log in, or refresh when less than min(5 min, 10 % of the lifetime) remains. */
  private async bearer(): Promise<BearerSession> {
    const s = this.bearerSession;
    if (s) {
      const margin = Math.min(5 * 60_000, (s.expiresAt - s.issuedAt) / 10);
      if (s.expiresAt - this.now() > margin) return s;
    }
    this.pending ??= (async () => {
      try {
        let next: BearerSession | undefined;
        if (s?.refreshToken) {
          next = await this.token(authEndpoints.refresh, { refreshToken: s.refreshToken }).catch((err: unknown) => {
            this.logger?.warn({ endpoint: authEndpoints.refresh.name, ...errorFields(err) }, 'token refresh failed; logging in again');
            return undefined;
          });
        }
        next ??= await this.token(authEndpoints.login, this.auth as { login: string; password: string });
        this.bearerSession = next;
        return next;
      } finally {
        this.pending = undefined;
      }
    })();
    return this.pending;
  }

  private async token(endpoint: TokenEndpoint, body: Record<string, unknown>): Promise<BearerSession> {
    const issuedAt = this.now();
    const result = await this.tokenCall(endpoint, body);
    const expiresAt = Date.parse(result.expiresAt);
    this.seen.add(result.token, result.refreshToken);
    return {
      token: result.token,
      ...(result.refreshToken ? { refreshToken: result.refreshToken } : {}),
      issuedAt,
      expiresAt: Number.isNaN(expiresAt) ? issuedAt + FALLBACK_LIFETIME_MS : expiresAt,
    };
  }
}
