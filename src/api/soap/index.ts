export { ALL_OPERATIONS, SOAP_NS, SOAP_PATH, operationByName, typeDef } from './schema.js';
export type { OperationDef } from './schema.js';
export { buildWsdl } from './wsdl.js';
export { STREAM_SLOT, SoapXmlError, decodeFields, escapeText, readXml, soapPayload, writeFault, writeField, writeResponse } from './xml.js';
export type { FaultFields, SoapVersion, XmlNode } from './xml.js';
