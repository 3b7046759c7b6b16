export { GridsyncError, isGridsyncError } from './gridsync-error.js';
export { errorFields } from './log-fields.js';
export { scrubSecrets, SECRET_MASK } from './secrets.js';
