/**
 * The SOAP faults the emulator raises. The numeric code is the position of the failure in the
 * service's `RetCode` enumeration counting from 0 (the two codes seen in the service's own
 * material, 5 = invalid session id and 8 = invalid data length, fit that rule); `faultcode` is
 * Client for the caller's mistakes and Server for our own failures.
 */
import { GridsyncError } from '@gridsync/protocol/errors';
import { EmulatorError } from '../context.js';
import type { FaultFields } from '@gridsync/protocol/soap';

export const RET = {
  Unknown: 0,
  SessionTimeout: 2,
  AccessDenied: 3,
  NotFound: 4,
  InvalidID: 5,
  Duplicate: 6,
  IDExistsOnNetwork: 7,
  InvalidDataType: 8,
  InvalidDataLength: 9,
  DataError: 10,
  SQLError: 11,
  InternalError: 12,
} as const;

const NAMES: Record<number, string> = Object.fromEntries(Object.entries(RET).map(([k, v]) => [v, k]));

export class SoapFault extends GridsyncError {
  readonly code = 'EMULATOR_SOAP_FAULT';
  constructor(
    readonly errorCode: number,
    message: string,
    readonly errorItem = '',
    readonly faultCode: 'Client' | 'Server' = errorCode >= RET.SQLError ? 'Server' : 'Client',
  ) {
    super(message);
  }

  fields(): FaultFields {
    return {
      faultCode: this.faultCode,
      message: this.message,
      errorCode: this.errorCode,
      errorString: NAMES[this.errorCode] ?? 'Unknown',
      errorItem: this.errorItem,
      errorMessage: this.message,
    };
  }
}

export const fault = (code: number, message: string, item = ''): SoapFault => new SoapFault(code, message, item);

/** The REST side's errors (shared parcel and routing logic) in SOAP terms. */
export function toSoapFault(err: unknown): SoapFault {
  if (err instanceof SoapFault) return err;
  if (err instanceof EmulatorError) {
    const item = /^(\w+):/.exec(err.message)?.[1] ?? '';
    switch (err.errorCode) {
      case 'ObjectNotFound':
        return fault(RET.NotFound, err.message, item);
      case 'AccessDenied':
        return fault(RET.AccessDenied, err.message, item);
      case 'DuplicateObject':
        return fault(RET.Duplicate, err.message, item);
      case 'InvalidSession':
      case 'InvalidAPIKey':
        return fault(RET.InvalidID, err.message, 'SessionID');
      case 'InternalError':
        return fault(RET.InternalError, err.message, item);
      default:
        return fault(RET.DataError, err.message, item);
    }
  }
  return new SoapFault(RET.InternalError, `Server was unable to process request. ---> ${(err as Error)?.message ?? String(err)}`);
}
