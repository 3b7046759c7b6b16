/** Paths gridsync refuses to use: they would leave their folder, or a rename across them would not be atomic. */
import { GridsyncError } from '../errors/index.js';

/** A name (from the service or a naming template) would leave its folder: nothing is written outside. */
export class UnsafePathError extends GridsyncError {
  readonly code = 'FILES_UNSAFE_PATH';
}

/** A staging or processing folder is not on its inbox's or outbox's filesystem: the final rename would not be atomic. */
export class CrossFilesystemError extends GridsyncError {
  readonly code = 'FILES_CROSS_FILESYSTEM';
}
