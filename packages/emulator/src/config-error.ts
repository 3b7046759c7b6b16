import { GridsyncError } from '@gridsync/protocol/errors';

/** A refused emulator configuration: exposure without the safeguards, a data file that cannot serve. */
export class EmulatorConfigError extends GridsyncError {
  readonly code = 'EMULATOR_CONFIG';
}
