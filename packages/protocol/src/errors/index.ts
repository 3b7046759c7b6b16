export { GridsyncError, isGridsyncError } from './gridsync-error.js';
export { InternalError } from './internal.js';
