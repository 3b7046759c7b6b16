/** SOAP 4.1 as both ends speak it: the operations' schema, the WSDL, and the XML read and written. */
export { ALL_OPERATIONS, SOAP_NS, SOAP_PATH, operationByName, typeDef } from './schema.js';
export type { OperationDef } from './schema.js';
export { buildWsdl } from './wsdl.js';
export {
  STREAM_SLOT,
  SoapLimitError,
  SoapXmlError,
  child,
  decodeFields,
  decodeValue,
  escapeText,
  isFault,
  readFault,
  readXml,
  soapPayload,
  writeFault,
  writeField,
  writeRequest,
  writeResponse,
} from './xml.js';
export type { FaultFields, ParsedFault, ReadOptions, SoapVersion, XmlNode } from './xml.js';
