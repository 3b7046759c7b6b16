export { GridsyncError, isGridsyncError } from '@gridsync/protocol/errors';
export { InternalError } from '@gridsync/protocol/errors';
export { codeOf, errorFields } from './log-fields.js';
export { TroubleLog, troubleStep, type Trouble, type TroubleLine, type TroubleLogger, type TroubleLogOptions } from './trouble-log.js';
export { holdIssued, holdSecrets, scrubHeld, scrubSecrets, SECRET_MASK } from './secrets.js';
export { ERROR_TABLE, errorRow, EXIT, renderErrorTable, type ErrorCode, type ErrorRow, type ExitCode } from './table.js';
