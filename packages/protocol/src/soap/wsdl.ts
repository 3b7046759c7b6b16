/**
 * The WSDL of the SOAP interface, generated from schema.ts and laid out as the service's platform
 * lays out its own: one wrapper element per request and response, messages `<Op>SoapIn`/`SoapOut`
 * with a part named `parameters`, SOAP 1.1 and 1.2 bindings, one service with two ports.
 */
import { ALL_OPERATIONS, SERVICE_NAME, SOAP_NS, TYPES, isPrimitive, type FieldDef } from './schema.js';
import { escapeText } from './xml.js';

const xsType = (type: string): string => (isPrimitive(type) ? `s:${type}` : `tns:${type}`);

function element(f: FieldDef, extra = ''): string {
  return `<s:element minOccurs="${f.min}" maxOccurs="1" name="${f.name}"${extra} type="${xsType(f.type)}" />`;
}

function schema(): string {
  const out: string[] = [`<s:schema elementFormDefault="qualified" targetNamespace="${SOAP_NS}">`];
  for (const op of ALL_OPERATIONS) {
    out.push(
      `<s:element name="${op.name}"><s:complexType>`,
      op.params.length ? `<s:sequence>${op.params.map((p) => element(p)).join('')}</s:sequence>` : '',
      '</s:complexType></s:element>',
    );
    out.push(
      `<s:element name="${op.name}Response"><s:complexType><s:sequence>${element(op.result)}</s:sequence></s:complexType></s:element>`,
    );
  }
  for (const t of TYPES.values()) {
    if (t.kind === 'enum') {
      out.push(
        `<s:simpleType name="${t.name}"><s:restriction base="s:string">${t.values.map((v) => `<s:enumeration value="${v}" />`).join('')}</s:restriction></s:simpleType>`,
      );
    } else if (t.kind === 'array') {
      out.push(
        `<s:complexType name="${t.name}"><s:sequence><s:element minOccurs="0" maxOccurs="unbounded" name="${t.item}" nillable="true" type="tns:${t.item}" /></s:sequence></s:complexType>`,
      );
    } else {
      out.push(`<s:complexType name="${t.name}"><s:sequence>${t.fields.map((f) => element(f)).join('')}</s:sequence></s:complexType>`);
    }
  }
  out.push('</s:schema>');
  return out.join('');
}

function binding(name: string, prefix: 'soap' | 'soap12'): string {
  const ops = ALL_OPERATIONS.map(
    (op) =>
      `<wsdl:operation name="${op.name}"><${prefix}:operation soapAction="${op.action}" style="document" />` +
      `<wsdl:input><${prefix}:body use="literal" /></wsdl:input><wsdl:output><${prefix}:body use="literal" /></wsdl:output></wsdl:operation>`,
  ).join('');
  return `<wsdl:binding name="${name}" type="tns:${SERVICE_NAME}Soap"><${prefix}:binding transport="http://schemas.xmlsoap.org/soap/http" />${ops}</wsdl:binding>`;
}

/** The WSDL with both ports' address set to `location` (the URL of the endpoint itself). */
export function buildWsdl(location: string): string {
  const loc = escapeText(location).replace(/"/g, '&quot;');
  const messages = ALL_OPERATIONS.map(
    (op) =>
      `<wsdl:message name="${op.name}SoapIn"><wsdl:part name="parameters" element="tns:${op.name}" /></wsdl:message>` +
      `<wsdl:message name="${op.name}SoapOut"><wsdl:part name="parameters" element="tns:${op.name}Response" /></wsdl:message>`,
  ).join('');
  const portType = ALL_OPERATIONS.map(
    (op) =>
      `<wsdl:operation name="${op.name}"><wsdl:documentation xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/">${escapeText(op.doc)}</wsdl:documentation>` +
      `<wsdl:input message="tns:${op.name}SoapIn" /><wsdl:output message="tns:${op.name}SoapOut" /></wsdl:operation>`,
  ).join('');
  return (
    '<?xml version="1.0" encoding="utf-8"?>' +
    '<wsdl:definitions xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/" xmlns:soap="http://schemas.xmlsoap.org/wsdl/soap/" ' +
    'xmlns:soap12="http://schemas.xmlsoap.org/wsdl/soap12/" xmlns:s="http://www.w3.org/2001/XMLSchema" ' +
    `xmlns:tns="${SOAP_NS}" targetNamespace="${SOAP_NS}">` +
    `<wsdl:types>${schema()}</wsdl:types>${messages}` +
    `<wsdl:portType name="${SERVICE_NAME}Soap">${portType}</wsdl:portType>` +
    binding(`${SERVICE_NAME}Soap`, 'soap') +
    binding(`${SERVICE_NAME}Soap12`, 'soap12') +
    `<wsdl:service name="${SERVICE_NAME}">` +
    `<wsdl:port name="${SERVICE_NAME}Soap" binding="tns:${SERVICE_NAME}Soap"><soap:address location="${loc}" /></wsdl:port>` +
    `<wsdl:port name="${SERVICE_NAME}Soap12" binding="tns:${SERVICE_NAME}Soap12"><soap12:address location="${loc}" /></wsdl:port>` +
    '</wsdl:service></wsdl:definitions>'
  );
}
