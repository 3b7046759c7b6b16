/** Errors of the callbacks: set-up the operator must fix, and a test call that did not come through. */
import { GridsyncError } from '../errors/index.js';

/** The callback credentials or registration cannot be used as they are (empty password file, unreadable state, not registered). */
export class CallbackSetupError extends GridsyncError {
  readonly code = 'CALLBACKS_SETUP';
}

/** `gridsync callbacks test`: the service's test call did not reach the receiver verified. */
export class CallbackTestError extends GridsyncError {
  readonly code = 'CALLBACKS_TEST_FAILED';
}
