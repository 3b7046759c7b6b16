/**
 * `log.level: debug`: the pipelines' events as log lines — each mailbox's cycle (start, end with
 * its counts and duration) and each decision about an item (skipped, deferred, refused, failed)
 * with its stable reason code. The one place events become debug lines; the pipelines log no debug
 * lines of their own. Each request's line comes from the client core (every request of REST and
 * SOAP passes its attempt loop).
 */
import type { EventBus, PipelineEvents, ProblemEvent } from '../events/index.js';
import type { Logger } from '../log.js';

/** The decision each problem event stands for, as the debug line names it. */
export const DECISION_OF = {
  'inbound:skipped': 'skipped',
  'inbound:deferred': 'deferred',
  'inbound:failed': 'failed',
  'outbound:deferred': 'deferred',
  'outbound:rejected': 'refused',
  'outbound:failed': 'failed',
} as const satisfies Partial<Record<keyof PipelineEvents, string>>;

/** The messages of the lines made here (the docs quote them). */
export const DEBUG_MESSAGES = ['mailbox cycle started', 'mailbox cycle ended', 'decision'] as const;

/** The code of a decision whose cause gave none. */
export const UNSPECIFIED_REASON = 'UNSPECIFIED';

export function logEventsAtDebug(events: EventBus<PipelineEvents>, logger: Logger): void {
  const [started, ended, decision] = DEBUG_MESSAGES;
  events.on('cycle:start', ({ mailbox, direction }) => logger.debug({ mailbox, direction }, started));
  events.on('cycle:end', ({ mailbox, direction, durationMs, counts, code }) =>
    logger.debug({ mailbox, direction, durationMs, ...counts, ...(code !== undefined ? { code } : {}) }, ended),
  );
  for (const name of Object.keys(DECISION_OF) as (keyof typeof DECISION_OF)[]) {
    const direction = name.startsWith('inbound:') ? 'in' : 'out';
    events.on(name, (e: ProblemEvent) =>
      logger.debug(
        {
          mailbox: e.mailbox,
          direction,
          decision: DECISION_OF[name],
          code: e.code ?? UNSPECIFIED_REASON,
          count: e.count,
          ...(e.parcelId !== undefined ? { parcelId: e.parcelId } : {}),
          ...(e.file !== undefined ? { file: e.file } : {}),
          ...(e.reason !== undefined ? { reason: e.reason } : {}),
        },
        decision,
      ),
    );
  }
}
