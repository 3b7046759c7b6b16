/**
 * Mailboxes whose own part of a cycle fails while the service and the journal serve the others:
 * its pending list refused (403: access revoked; 404: the mailbox is gone), an answer about it
 * that cannot be read, its folders unusable. Such a mailbox must not hold the rest back, cycle
 * after cycle: it is left out, with a pause that doubles as for a failed cycle, until it answers
 * again. A failure that is not about one mailbox (the service unreachable or unwell, the key
 * refused, the journal gone) still fails the whole cycle: every other mailbox would meet it too,
 * and the cycle's backoff spares the service their calls. Pure bookkeeping; the cycle logs and
 * reports.
 */
import { GridApiError } from '../api/index.js';
import { codeOf } from '../errors/index.js';
import { backoffDelay } from './scheduler.js';

/** Codes of failures that every mailbox would meet: the network, the journal's database. */
const SHARED_CODES = new Set(['GRID_TRANSPORT_ERROR', 'JOURNAL_UNAVAILABLE', 'JOURNAL_LOCKED']);

/** Whether `err` says something about the service, the key or the journal rather than about one mailbox. */
export function failsEveryMailbox(err: unknown): boolean {
  if (err instanceof GridApiError) return err.retryable || err.httpStatus === 401 || err.noSuchEndpoint;
  const code = codeOf(err);
  return SHARED_CODES.has(code) || code.startsWith('SQLITE_');
}

export interface MailboxFailure {
  readonly mailbox: string;
  /** Its failed cycles in a row. */
  readonly failures: number;
  readonly error: string;
  /** Until its next try. */
  readonly retryInMs: number;
}

export class FailingMailboxes {
  private readonly state = new Map<string, { failures: number; at: number; delay: number; error: string }>();

  constructor(private readonly pollMs: number) {}

  /** Whether the mailbox may run now: it is not failing, or its pause is over. */
  due(mailbox: string, now: number): boolean {
    const s = this.state.get(mailbox);
    if (!s) return true;
    const elapsed = now - s.at;
    // A wall clock stepped back must not stretch the pause by the step.
    return elapsed >= s.delay || elapsed < 0;
  }

  /** Records a failed try; returns the mailbox's state after it. */
  failed(mailbox: string, error: string, now: number): MailboxFailure {
    const failures = (this.state.get(mailbox)?.failures ?? 0) + 1;
    const delay = backoffDelay(failures, this.pollMs);
    this.state.set(mailbox, { failures, at: now, delay, error });
    return { mailbox, failures, error, retryInMs: delay };
  }

  /** Records a successful try; returns the failures in a row it ended (0: the mailbox was not failing). */
  succeeded(mailbox: string): number {
    const failures = this.state.get(mailbox)?.failures ?? 0;
    this.state.delete(mailbox);
    return failures;
  }

  /** Drops what is known of the mailbox here (another instance serves it now). */
  forget(mailbox: string): void {
    this.state.delete(mailbox);
  }

  /** Whether any mailbox is failing (per cycle, so no list is built). */
  get any(): boolean {
    return this.state.size > 0;
  }

  /** The mailboxes failing now, as /readyz shows them. */
  list(now: number): MailboxFailure[] {
    return [...this.state.entries()].map(([mailbox, s]) => ({
      mailbox,
      failures: s.failures,
      error: s.error,
      retryInMs: Math.max(0, Math.min(s.delay, s.delay - (now - s.at))),
    }));
  }
}
