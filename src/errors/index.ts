export { GridsyncError, isGridsyncError } from './gridsync-error.js';
export { errorFields } from './log-fields.js';
