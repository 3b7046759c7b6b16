/**
 * Credentials of the SOAP client: the API key is sent as the SessionID of every call (preferred:
 * no Login, no session counted against the account); with a login and password the client logs
 * in once, shares that one session between all calls, logs in again once on a session fault, and
 * logs out on close (sessions left open count against the account's session limit).
 */
import { GridConfigError, GridResponseError } from '../errors.js';
import type { Credentials } from '../retry-loop.js';
import { SecretsSeen } from '../secrets-seen.js';
import { waitShared } from '../shared-wait.js';
import type { GridAuth } from '../session.js';
import { SoapFaultError } from './errors.js';

export class SoapSession implements Credentials<string> {
  private sessionId: string | undefined;
  private loggingIn: Promise<string> | undefined;
  private readonly seen: SecretsSeen;

  constructor(
    private readonly auth: GridAuth,
    /** Calls `Login` (without a session) and returns its result. */
    private readonly login: (loginName: string, password: string) => Promise<unknown>,
  ) {
    if ('apiKey' in auth ? !auth.apiKey : !auth.login || !auth.password)
      throw new GridConfigError('no credentials: give an API key, or login and password', 'soap');
    this.seen = new SecretsSeen(auth);
  }

  /** The SessionID to send: the API key, or the current Login session (one Login at a time). */
  async current(signal?: AbortSignal): Promise<string> {
    const a = this.auth;
    if ('apiKey' in a) return a.apiKey;
    if (this.sessionId) return this.sessionId;
    this.loggingIn ??= (async () => {
      try {
        const id = await this.login(a.login, a.password);
        if (typeof id !== 'string' || id.trim() === '') throw new GridResponseError('Login', 200, 'LoginResult', 'no session id');
        this.sessionId = id.trim();
        this.seen.add(this.sessionId);
        return this.sessionId;
      } finally {
        this.loggingIn = undefined;
      }
    })();
    return waitShared(this.loggingIn, signal);
  }

  isExpired(err: unknown): boolean {
    return 'login' in this.auth && err instanceof SoapFaultError && err.sessionFault;
  }

  /** Forgets `used` unless another call already replaced it with a fresh session. */
  invalidate(used: string | undefined): void {
    if (this.sessionId === used) this.sessionId = undefined;
  }

  secrets(): readonly string[] {
    return this.seen.values();
  }

  /** The Login session to end at close, if any; the session forgets it. */
  takeForLogout(): string | undefined {
    const id = this.sessionId;
    this.sessionId = undefined;
    return id;
  }
}
