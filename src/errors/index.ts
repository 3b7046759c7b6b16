export { GridsyncError, isGridsyncError } from './gridsync-error.js';
export { InternalError } from './internal.js';
export { codeOf, errorFields } from './log-fields.js';
export { holdSecrets, scrubHeld, scrubSecrets, SECRET_MASK } from './secrets.js';
export { ERROR_TABLE, errorRow, EXIT, renderErrorTable, type ErrorCode, type ErrorRow, type ExitCode } from './table.js';
