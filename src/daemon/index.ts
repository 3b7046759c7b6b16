export { Daemon, StartupError, type StartupCode } from './daemon.js';
export type { CycleTotals, DaemonOptions } from './daemon.js';
export { createLogger, wantsPretty, REDACT_PATHS } from './logger.js';
export type { ProgressRow } from './progress-row.js';
