export { Daemon, type DaemonOptions } from './daemon.js';
export { StartupError, journalAdvice, type StartupCode } from './startup-error.js';
export { ONCE_MAILBOX_CONCURRENCY, type DrainResult, type LeftItem } from './drain.js';
export type { CycleTotals } from './runtime.js';
export { createLogger, wantsPretty, REDACT_PATHS } from './logger.js';
export type { ProgressRow } from './progress-row.js';
export { PREFLIGHT_CHECKS, type PreflightCheck } from './preflight.js';
export {
  claimJournal,
  journalServiceVerdict,
  refuseAnotherService,
  serviceChangedAdvice,
  serviceHeldAdvice,
  serviceIdentity,
  type JournalServiceVerdict,
} from './journal-service.js';
