/**
 * A SOAP fault as the rest of gridsync sees it. Every fault travels with HTTP 500, so the status
 * tells nothing; the fault's code and numeric detail do. The error is a GridApiError carrying the
 * status and errorCode the REST interface uses for the same failure, so the pipelines decide on it
 * exactly as over REST (retryable only for `soap:Server`, permanent otherwise), and keeps the SOAP
 * fields for the operator.
 */
import { ERROR_STATUS } from '@gridsync/protocol/wire';
import { GridApiError } from '../errors.js';
import type { ParsedFault } from '@gridsync/protocol/soap';

/** The REST errorCode for a SOAP fault (numeric code = position in the service's RetCode list). */
export function restErrorCode(f: Pick<ParsedFault, 'faultCode' | 'errorCode' | 'errorItem' | 'hasErrorCode'>): keyof typeof ERROR_STATUS {
  if (isSessionFault(f)) return 'InvalidSession';
  if (f.faultCode === 'Server') return 'InternalError';
  switch (f.errorCode) {
    case 3:
      return 'AccessDenied';
    case 4:
      return 'ObjectNotFound';
    case 6:
    case 7:
      return 'DuplicateObject';
    case 11:
    case 12:
      return 'InternalError';
    default:
      return 'InvalidParameter';
  }
}

/** Code 2 (session timed out), or code 5 (invalid id) naming the SessionID: a fresh Login may cure it. */
export function isSessionFault(f: Pick<ParsedFault, 'errorCode' | 'errorItem' | 'hasErrorCode'>): boolean {
  return f.hasErrorCode && (f.errorCode === 2 || (f.errorCode === 5 && (f.errorItem ?? '').toLowerCase() === 'sessionid'));
}

export class SoapFaultError extends GridApiError {
  /** `Client` or `Server` (SOAP 1.2 Sender/Receiver read as the same). */
  readonly faultCode: 'Client' | 'Server';
  /** The numeric code of the fault detail; -1 when the detail had none. */
  readonly soapErrorCode: number;
  readonly errorItem: string;
  readonly errorString: string;
  readonly sessionFault: boolean;

  constructor(operation: string, fault: ParsedFault) {
    const code = restErrorCode(fault);
    super(
      operation,
      ERROR_STATUS[code],
      code,
      `${fault.message}${fault.hasErrorCode ? ` (code ${fault.errorCode}${fault.errorItem ? `, ${fault.errorItem}` : ''})` : ''}`,
    );
    this.faultCode = fault.faultCode;
    this.soapErrorCode = fault.errorCode;
    this.errorItem = fault.errorItem ?? '';
    this.errorString = fault.errorString ?? '';
    this.sessionFault = isSessionFault(fault);
  }

  /** Only the service's own failures (`soap:Server`) may pass on a later attempt. */
  override get retryable(): boolean {
    return this.faultCode === 'Server';
  }
}
