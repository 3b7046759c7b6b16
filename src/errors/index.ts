export { GridsyncError, isGridsyncError } from './gridsync-error.js';
export { errorFields } from './log-fields.js';
export { holdSecrets, scrubHeld, scrubSecrets, SECRET_MASK } from './secrets.js';
