import { GridsyncError } from '../errors/index.js';

/** The message is not well-formed XML, not a SOAP envelope, or a value does not fit its type. */
export class SoapXmlError extends GridsyncError {
  readonly code = 'GRID_SOAP_XML';
  constructor(
    message: string,
    /** Where: `Body/ParcelInBoxResponse/…/ParcelID`, or `(xml)`. */
    readonly path: string,
    /** True when the input ended before the envelope was complete. */
    readonly truncated = false,
  ) {
    super(`${path}: ${message}`);
  }
}
