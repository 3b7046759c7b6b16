/**
 * Shutdown, graphile-worker style: every resource registers its release when it is opened, and
 * close runs them all in reverse order even when one fails, each within what is left of the stop's
 * deadline (at least a short grace, while the stop's grace lasts: stop-deadline.ts). One that
 * overruns (a transfer still holding the client) makes the stop a forced one; those left when the
 * grace is used up are not waited for at all.
 */
import { errorFields } from '../errors/index.js';
import type { Logger } from '../log.js';
import type { StopDeadline } from './stop-deadline.js';

interface Cleanup {
  readonly name: string;
  readonly fn: () => Promise<void> | void;
  /** Left to process exit after a forced stop (the journal: a transfer may still write to it). */
  readonly skipWhenForced?: true;
}

export class Cleanups {
  private readonly stack: Cleanup[] = [];
  private forcedStop = false;

  push(c: Cleanup): void {
    this.stack.push(c);
  }

  /** True when a release overran the deadline: the caller should exit the process. */
  get forced(): boolean {
    return this.forcedStop;
  }

  async runAll(deadline: StopDeadline, logger: Logger): Promise<void> {
    const left: string[] = [];
    for (const c of this.stack.splice(0).reverse()) {
      if (this.forcedStop && c.skipWhenForced) continue;
      const allowanceMs = deadline.allowanceMs();
      if (allowanceMs <= 0) {
        left.push(c.name);
        continue;
      }
      try {
        const inTime = await withDeadline(Promise.resolve(c.fn()), allowanceMs);
        if (!inTime) {
          this.forcedStop = true;
          logger.warn(
            { resource: c.name, allowanceMs },
            'in-flight transfers did not finish within shutdownTimeout; stopping anyway (they resume from the journal at the next start)',
          );
        }
      } catch (err) {
        logger.warn({ resource: c.name, ...errorFields(err) }, 'cleanup failed');
      }
    }
    if (left.length > 0) {
      this.forcedStop = true;
      logger.warn({ resources: left }, 'the stop’s deadline is used up; these are left to the process exit');
    }
  }
}

/** Resolves true when `p` settles within `ms`, false otherwise (`p` keeps running). */
export async function withDeadline(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([p.then(() => true as const), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
