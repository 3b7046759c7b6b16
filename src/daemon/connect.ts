/**
 * Meeting the service at start-up: the credentials and the session's mailbox from the session
 * context (with backoff while the service is unreachable, for `run`), then access to every
 * configured mailbox other than the key's own.
 */
import { GridApiError, GridClient, GridTransportError, type MailboxTransport } from '../api/index.js';
import { errorFields, TroubleLog } from '../errors/index.js';
import type { Logger } from '../log.js';
import type { DaemonConfig } from './runtime.js';
import type { HealthState } from './readiness.js';
import { backoffDelay } from './scheduler.js';
import { StartupError } from './startup-error.js';

export interface ConnectDeps {
  readonly config: DaemonConfig;
  readonly client: MailboxTransport;
  readonly logger: Logger;
  readonly signal: AbortSignal;
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly health: HealthState;
  /** The service answered (1) or not (0). */
  readonly reachable: (up: 0 | 1) => void;
  /** Asks the service manager for more start-up time while waiting. */
  readonly extendStart: (ms: number) => void;
}

/**
 * Checks the credentials and learns the session's mailbox from the session context. 401/403 is
 * fatal. Any other failure, when every mailbox names its mailboxId, is only a warning: syncing
 * starts and each cycle meets the service on its own. Otherwise a network error waits (run) or
 * fails (once); a 404 means the service has no such endpoint. `unreachable` says why, when the
 * service did not answer at all.
 */
export async function connect(d: ConnectDeps, waitForService: boolean): Promise<{ mailboxId: number | undefined; unreachable?: string }> {
  const configured = d.config.mailboxes.every((m) => m.mailboxId !== undefined);
  // A host started during an outage waits on a backoff of up to 5 minutes: one line per try was
  // a warning every 5 minutes all night, and without the failure's code.
  const waiting = new TroubleLog({
    logger: d.logger,
    level: 'warn',
    started: "cannot learn the session's mailbox yet; retrying",
    ended: "the service answers; the session's mailbox is known",
  });
  for (let attempt = 1; ; attempt++) {
    try {
      const ctx = await d.client.sessionContext({ signal: d.signal });
      waiting.ok({ after: attempt - 1 });
      d.reachable(1);
      d.health.connectFailures = 0;
      d.health.lastError = undefined;
      if (ctx.mailboxId === undefined && !configured) {
        throw new StartupError('STARTUP_NO_MAILBOX', "the service did not name the session's mailbox: set mailboxes[].mailboxId");
      }
      return { mailboxId: ctx.mailboxId };
    } catch (err) {
      if (err instanceof StartupError) throw err;
      if (err instanceof GridApiError && (err.httpStatus === 401 || err.httpStatus === 403)) {
        throw new StartupError(
          'STARTUP_CREDENTIALS_REJECTED',
          `credentials rejected by the service: ${err.errorCode ?? err.httpStatus} ${err.serviceMessage}`,
        );
      }
      if (d.signal.aborted) throw new StartupError('STARTUP_STOPPED', 'stopped before the service became reachable');
      const why = describeConnectFailure(err);
      if (configured) {
        d.logger.warn({ ...errorFields(err), err: why }, 'cannot read the session context; syncing the configured mailboxes anyway');
        return { mailboxId: undefined, ...(err instanceof GridTransportError ? { unreachable: why } : {}) };
      }
      if (err instanceof GridApiError && err.noSuchEndpoint) {
        throw new StartupError('STARTUP_NO_MAILBOX', `${why}: set mailboxes[].mailboxId, or check api.baseUrl`, { cause: err });
      }
      d.reachable(0);
      if (!waitForService) throw new StartupError('STARTUP_UNREACHABLE', why, { cause: err });
      d.health.connectFailures = attempt;
      d.health.lastError = why;
      const wait = backoffDelay(attempt, 1000);
      waiting.failed(err, { retryInMs: wait });
      d.extendStart(wait + 60_000);
      try {
        await d.sleep(wait, d.signal);
      } catch {
        throw new StartupError('STARTUP_STOPPED', 'stopped before the service became reachable');
      }
    }
  }
}

/**
 * Every configured mailbox other than the key's own must be reachable with the key: otherwise
 * `once` died on the first list call and `run` sent every outbound file to errorDir.
 */
export async function checkMailboxes(d: ConnectDeps, me: number | undefined): Promise<void> {
  for (const [i, m] of d.config.mailboxes.entries()) {
    // The check reads a REST catalog endpoint; other transports meet the mailbox in their cycles.
    if (m.mailboxId === undefined || m.mailboxId === me || !(d.client instanceof GridClient)) continue;
    try {
      // Listing the mailbox's inbox is the check both interfaces offer (REST and SOAP answer 403/404 alike).
      await d.client.pendingInbox(m.mailboxId, { signal: d.signal });
    } catch (err) {
      if (err instanceof GridApiError && (err.httpStatus === 403 || (err.httpStatus === 404 && !err.noSuchEndpoint))) {
        throw new StartupError(
          'STARTUP_MAILBOX_UNREACHABLE',
          `mailboxes[${i}].mailboxId: the API key${me !== undefined ? ` (user of mailbox ${me})` : ''} cannot reach mailbox ${m.mailboxId}: ${err.errorCode ?? err.httpStatus} ${err.serviceMessage}; check the id, or use the key of a user with access to that mailbox`,
        );
      }
      // Anything else (the service wobbling) is not a verdict on the id: the cycles will tell.
      d.logger.warn({ mailboxId: m.mailboxId, ...errorFields(err) }, 'could not check access to the mailbox at start-up');
    }
  }
}

/** Why the service could not be used, in the operator's terms: unreachable only when it is. */
export function describeConnectFailure(err: unknown): string {
  if (err instanceof GridApiError) {
    if (err.noSuchEndpoint) return `the service has no such endpoint (HTTP 404 on ${err.endpoint})`;
    return `the service answered HTTP ${err.httpStatus}${err.errorCode ? ` ${err.errorCode}` : ''} on ${err.endpoint}${err.serviceMessage ? `: ${err.serviceMessage}` : ''}`;
  }
  if (err instanceof GridTransportError) return `the service is not reachable: ${err.message}`;
  return `the service's answer could not be used: ${(err as Error).message}`;
}
