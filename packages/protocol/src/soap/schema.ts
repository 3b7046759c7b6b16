/**
 * The one definition of the SOAP 4.1 interface: every record (with its element order and which
 * elements are required), every enumeration, and every operation (its SOAPAction, parameters in
 * order, result). The WSDL (wsdl.ts), the emulator's (de)serialisation and the client's are all
 * derived from these tables, so they cannot drift apart.
 *
 * Required-ness follows the rule of the service's SOAP platform: value types (numbers, booleans,
 * dates, enumerations) are always present (`minOccurs="1"`), reference types (strings, base64,
 * records, arrays) may be omitted when null (`minOccurs="0"`).
 *
 * Where the service's own description of a record is not known to us (marked "our stand-in"), the
 * record is kept small; the emulator and our WSDL agree on it, and the client reads records by
 * element name, so a richer real record is still read.
 */
import { InternalError } from '../errors/index.js';

/** Target namespace of every element of the interface (a reserved `.example` name). */
export const SOAP_NS = 'https://os.grid.example/';
export const SOAP11_ENV = 'http://schemas.xmlsoap.org/soap/envelope/';
export const SOAP12_ENV = 'http://www.w3.org/2003/05/soap-envelope';
/** XML-encoded "GridOS API v4". */
export const SERVICE_NAME = 'GridOS_x0020_API_x0020_v4';
/** The path the service lives at; the WSDL is at the same path with `?WSDL`. */
export const SOAP_PATH = '/v4.1/prod/GridOS.asmx';

export type Primitive = 'string' | 'int' | 'long' | 'short' | 'boolean' | 'dateTime' | 'base64Binary' | 'float';
const PRIMITIVES: ReadonlySet<string> = new Set<Primitive>([
  'string',
  'int',
  'long',
  'short',
  'boolean',
  'dateTime',
  'base64Binary',
  'float',
]);
const REFERENCE_PRIMITIVES: ReadonlySet<string> = new Set(['string', 'base64Binary']);

export interface FieldDef {
  readonly name: string;
  /** A primitive, or the name of an enum, record or array below. */
  readonly type: string;
  readonly min: 0 | 1;
}

export interface RecordDef {
  readonly kind: 'record';
  readonly name: string;
  readonly fields: readonly FieldDef[];
}

/** `ArrayOfX`: a sequence of `<X>` items (nillable), as the platform writes arrays. */
export interface ArrayDef {
  readonly kind: 'array';
  readonly name: string;
  readonly item: string;
}

export interface EnumDef {
  readonly kind: 'enum';
  readonly name: string;
  readonly values: readonly string[];
}

export type TypeDef = RecordDef | ArrayDef | EnumDef;

export interface OperationDef {
  readonly name: string;
  /** `"https://os.grid.example/<name>"` (sent quoted on SOAP 1.1). */
  readonly action: string;
  /** Parameters in element order; `SessionID` first for every operation that needs a session. */
  readonly params: readonly FieldDef[];
  /** `<name>Result` inside `<name>Response`. */
  readonly result: FieldDef;
  readonly session: boolean;
  /** One line for the WSDL's documentation and `gridsync call --soap --list`. */
  readonly doc: string;
}

const ENUMS: Record<string, readonly string[]> = {
  AuthLevel: ['NoChange', 'Root', 'TechOps', 'NetOps', 'NetworkAdmin', 'NetworkUser', 'MailboxAdmin', 'MailboxUser', 'TPUser', 'General'],
  ParcelStatus: [
    'InBoxReady',
    'InBoxTransferred',
    'x1256Pending',
    'as2Receive',
    'as2MDNSent',
    'as2MDNPending',
    'as2MDNRejected',
    'as2MDNConfirmed',
    'as2Sent',
    'as2SendFailed',
    'gisbReceived',
    'gisbSent',
    'gisbSendFailed',
    'cxmlReceived',
    'cxmlSent',
    'cxmlSendFailed',
    'ftpReceived',
    'x400Received',
    'smtpReceived',
    'oftpReceived',
    'oftpSendFailed',
    'oftpSent',
    'oftpAborted',
    'ftpSent',
    'ftpSendFailed',
    'as4Received',
    'as4MDNSent',
    'as4MDNPending',
    'as4MDNRejected',
    'as4MDNConfirmed',
    'as4Sent',
    'as4SendFailed',
    'outboxDeliveryError',
  ],
  // Two misspellings are the service's own.
  ParcelValid: [
    'Pending',
    'Invalid',
    'Valid',
    'PartialValid',
    'ValidNoneRouted',
    'Duplicate',
    'ZeroByte',
    'VallidRouted',
    'ValidPartialRouted',
    'ValidNoneRoutedx',
  ],
  Direction: ['NoDir', 'OutBox', 'InBox'],
  EDIStandard: ['X12', 'EDIFACT', 'TRADACOMS', 'VDA', 'XML', 'TXT', 'PDF', 'Binary', 'PEPPOL'],
  SessionStatus: ['Open', 'Closed', 'Expired'],
  RetCode: [
    'Unknown',
    'Success',
    'SessionTimeout',
    'AccessDenied',
    'NotFound',
    'InvalidID',
    'Duplicate',
    'IDExistsOnNetwork',
    'InvalidDataType',
    'InvalidDataLength',
    'DataError',
    'SQLError',
    'InternalError',
  ],
  Status: ['Development', 'Active', 'Preproduction', 'Suspended', 'Terminated'],
  StatusGridID: ['Active', 'AutoRoute', 'Pending', 'Suspended', 'Terminated', 'Duplicate'],
  ManifestType: ['System', 'Error', 'Manual', 'GridOS'],
  UseType: ['Undefined', 'Test', 'Production', 'TestAndProduction'],
  // Our stand-ins: the service's values of these two are not known to us.
  StatusInterconnect: ['Pending', 'Active', 'Cancelled'],
  eMailTo: ['None', 'Contact', 'Other', 'Both'],
};

const isValueType = (type: string): boolean => (PRIMITIVES.has(type) ? !REFERENCE_PRIMITIVES.has(type) : type in ENUMS);

/** A field whose required-ness follows the platform's rule (see the header). */
const f = (name: string, type: string): FieldDef => ({ name, type, min: isValueType(type) ? 1 : 0 });

/** `a:int b c:dateTime` → fields; a bare name is a string. */
function fields(spec: string): FieldDef[] {
  return spec
    .split(/\s+/)
    .filter(Boolean)
    .map((s) => {
      const [name, type] = s.split(':') as [string, string | undefined];
      return f(name, type ?? 'string');
    });
}

const RECORDS: Record<string, string> = {
  SessionInfo:
    'GridOSVersion SessionID SessionEventID:int UserID:int LoginName FirstName LastName Company EMail Phone TimeZoneOffset:float ' +
    'AuthLevel:AuthLevel LastLogin:dateTime OpenSessions:short TimeOut:short NetworkID:int MailboxID:int ip',
  // The service's record also has an optional `Events` list, which the emulator never fills.
  SessionLogInfo:
    'SessionID StartTime:dateTime EndTime:dateTime Expires:dateTime NetworkID:int MailboxID:int UserID:int Status:SessionStatus Version',
  ParcelIDInfo:
    'ParcelBytes:int ParcelDate:dateTime ActualBytes:int NetworkIDFrom:int NetworkNameFrom MailboxIDFrom:int MailboxNameFrom ' +
    'NetworkIDTo:int NetworkNameTo MailboxIDTo:int MailboxNameTo FileName MailbagControlID ArchiveDate:dateTime StatusDate:dateTime ' +
    'StatusCode StatusMessage LocalStatus:short LocalStatusDate:dateTime Valid:ParcelValid Acknowledgment Direction:Direction ' +
    'Interchanges:ArrayOfInterchangeIDInfo Log:ArrayOfManifestInfo ParcelID:long',
  ParcelIDInfoCollection:
    'PageSize:short PageNumber:short Count:int TotalRecords:int TotalPages:short ParcelIDInfoList:ArrayOfParcelIDInfo',
  FileInfo:
    'ParcelID:long FileName FileDate:dateTime Bytes:int Standard:EDIStandard Content:base64Binary ContentBase64String routerArchive:boolean',
  InterchangeIDInfo:
    'InterchangeID:int InterchangeProcessDate:dateTime NetworkIDFrom:int NetworkNameFrom MailboxIDFrom:int NetworkIDTo:int NetworkNameTo ' +
    'MailboxIDTo:int Standard:EDIStandard Bytes:int InterchangeControlID InterchangeDateTime:dateTime ArchiveDate:dateTime StatusDate:dateTime ' +
    'StatusCode StatusMessage DocumentType Header TPFrom:GridIDInfo TPTo:GridIDInfo',
  // The service's record also has optional `Owner`, `OwnerInfo` and `Config`, which the emulator never fills.
  GridIDInfo:
    'GridID:int NetworkID:int NetworkName MailboxID:int MailboxName Qualifier ID Description DataEMail MailboxDefault:boolean ' +
    'Status:StatusGridID UseType:UseType',
  ManifestInfo:
    'ManifestDate:dateTime NetworkID:int NetworkName Type:ManifestType ParcelID:long InterchangeID:int StatusCode StatusMessage StatusColor',
  // Our stand-ins (see the header).
  NetworkIDInfo: 'NetworkID:int Name Location UniqueID Status:Status CreateDate:dateTime',
  MailboxIDInfo: 'MailboxID:int NetworkID:int Name UniqueID Status:Status CreateDate:dateTime',
  UserIDInfo: 'UserID:int LoginName FirstName LastName Company EMail Phone AuthLevel:AuthLevel NetworkID:int MailboxID:int Status:Status',
  InterconnectIDInfo:
    'InterconnectID:int GridID1:int GridID2:int Status:StatusInterconnect Reference CreateDate:dateTime StatusDate:dateTime',
  InterchangeIDStatus: 'InterchangeID:int StatusCode StatusMessage',
};

const ARRAYS = [
  'ParcelIDInfo',
  'InterchangeIDInfo',
  'ManifestInfo',
  'SessionLogInfo',
  'NetworkIDInfo',
  'MailboxIDInfo',
  'UserIDInfo',
  'GridIDInfo',
  'InterconnectIDInfo',
];

export const TYPES: ReadonlyMap<string, TypeDef> = new Map<string, TypeDef>([
  ...Object.entries(ENUMS).map(([name, values]): [string, TypeDef] => [name, { kind: 'enum', name, values }]),
  ...Object.entries(RECORDS).map(([name, spec]): [string, TypeDef] => [name, { kind: 'record', name, fields: fields(spec) }]),
  ...ARRAYS.map((item): [string, TypeDef] => [`ArrayOf${item}`, { kind: 'array', name: `ArrayOf${item}`, item }]),
]);

export const isPrimitive = (type: string): type is Primitive => PRIMITIVES.has(type);

// Parameter lists shared by several operations.
const ARCHIVE = 'BeginDate:dateTime EndDate:dateTime GridIDFrom:int GridIDTo:int MailbagControlID PageNo:short RecordsPerPage:short';
const MAILBOX = 'NetworkID:int MailboxID:int';

/** [name, parameters after SessionID (or `!` first: no SessionID), result type, doc]. */
const OPERATIONS: readonly (readonly [string, string, string, string])[] = [
  ['Login', '! LoginName Password', 'string', 'Opens a session; returns its id (a GUID).'],
  ['Logout', '', 'int', 'Ends the session.'],
  ['WhoAmI', '', 'SessionInfo', 'The caller: user, network, mailbox, auth level, session timeout.'],
  ['Version', '!', 'string', 'Version of the service (no session needed).'],
  ['NowUTC', '!', 'dateTime', "The service's clock, UTC."],
  ['SessionLog', 'MaxRecords:short', 'ArrayOfSessionLogInfo', "The caller's recent sessions."],
  ['SessionLogCurrent', '', 'SessionLogInfo', 'The current session, with its expiry.'],
  ['ChangePassword', 'OldPassword NewPassword', 'boolean', "Changes the caller's password."],
  ['GenerateAPIKey', 'UserID:int', 'string', 'Issues a new API key for a user.'],
  ['UserGetAPIKey', 'UserID:int', 'string', "A user's API key."],
  ['ParcelInBox', '', 'ParcelIDInfoCollection', 'Parcels pending download in the session mailbox.'],
  [
    'ParcelInBoxEx',
    `${MAILBOX} GridIDFrom:int GridIDTo:int`,
    'ParcelIDInfoCollection',
    'Parcels pending download in a mailbox (0 = the session one).',
  ],
  [
    'ParcelInBoxExShort',
    `${MAILBOX} GridIDFrom:int GridIDTo:int Status:ParcelStatus`,
    'ParcelIDInfoCollection',
    'Inbound parcels of a mailbox with a given status.',
  ],
  ['ParcelInBoxArchive', ARCHIVE, 'ParcelIDInfoCollection', 'Inbound parcels of the session mailbox in a period, paged.'],
  ['ParcelInBoxArchiveEx', `${MAILBOX} ${ARCHIVE}`, 'ParcelIDInfoCollection', 'Inbound parcels of a mailbox in a period, paged.'],
  ['ParcelDownload', 'ParcelID:long', 'FileInfo', 'Downloads a parcel (Content as base64Binary).'],
  ['ParcelDownloadA', 'ParcelID:long', 'FileInfo', 'Downloads a parcel (ContentBase64String).'],
  ['ParcelDownloadNoUpdate', 'ParcelID:long', 'FileInfo', 'Downloads a parcel without changing its status.'],
  ['ParcelDownloadNoUpdateA', 'ParcelID:long', 'FileInfo', 'Downloads a parcel without changing its status (ContentBase64String).'],
  ['ParcelDownloadConfirm', 'ParcelID:long', 'boolean', 'Confirms a download: the parcel leaves the pending list.'],
  ['ParcelDownloadReset', 'ParcelID:long', 'boolean', 'Restores a parcel to the pending list.'],
  ['ParcelDownloadCancel', 'ParcelID:long', 'boolean', 'Cancels the download of an inbound parcel and removes it.'],
  ['ParcelUpload', 'FileName Bytes:int Content:base64Binary', 'int', 'Uploads a parcel, routed by its EDI envelope.'],
  ['ParcelUploadA', 'FileName ContentBase64', 'int', 'Uploads a parcel given as a base64 string, routed by its EDI envelope.'],
  ['ParcelUploadEx', `${MAILBOX} FileName Bytes:int Content:base64Binary`, 'int', 'Uploads a parcel from a given mailbox.'],
  ['ParcelUploadExA', `${MAILBOX} FileName ContentBase64`, 'int', 'Uploads a base64 string from a given mailbox.'],
  [
    'ParcelUploadMft',
    'FileName Bytes:int Content:base64Binary GridIDFrom:int GridIDTo:int',
    'int',
    'Uploads a file between explicit trading partners.',
  ],
  [
    'ParcelUploadMftA',
    'FileName ContentBase64 GridIDFrom:int GridIDTo:int',
    'int',
    'Uploads a base64 string between explicit trading partners.',
  ],
  ['ParcelOutBoxInProcess', '', 'ParcelIDInfoCollection', 'Outbound parcels of the session mailbox not yet delivered.'],
  ['ParcelOutBoxInProcessEx', MAILBOX, 'ParcelIDInfoCollection', 'Outbound parcels of a mailbox not yet delivered.'],
  ['ParcelOutBoxArchive', ARCHIVE, 'ParcelIDInfoCollection', 'Delivered outbound parcels of the session mailbox in a period, paged.'],
  [
    'ParcelOutBoxArchiveEx',
    `${MAILBOX} ${ARCHIVE}`,
    'ParcelIDInfoCollection',
    'Delivered outbound parcels of a mailbox in a period, paged.',
  ],
  [
    'ParcelOutBoxError',
    'BeginDate:dateTime EndDate:dateTime',
    'ParcelIDInfoCollection',
    'Rejected outbound parcels of the session mailbox in a period.',
  ],
  [
    'ParcelOutBoxErrorEx',
    `${MAILBOX} BeginDate:dateTime EndDate:dateTime`,
    'ParcelIDInfoCollection',
    'Rejected outbound parcels of a mailbox in a period.',
  ],
  ['ParcelInfo', 'ParcelID:long', 'ParcelIDInfo', 'One parcel.'],
  ['ParcelManifest', 'ParcelID:long', 'ArrayOfManifestInfo', "A parcel's log."],
  ['ParcelResend', 'ParcelID:long', 'boolean', 'Re-routes an outbound parcel (NetOps).'],
  ['ParcelSetMailbagControlID', 'ParcelID:int MailbagControlID', 'boolean', 'Tags a parcel with a control id.'],
  ['ParcelFindMailbagControlID', `${MAILBOX} MailbagControlID`, 'ArrayOfParcelIDInfo', 'Parcels of a mailbox with a control id.'],
  ['NetworkInfo', 'NetworkID:int', 'NetworkIDInfo', 'One network.'],
  ['NetworkList', 'Name', 'ArrayOfNetworkIDInfo', 'Networks whose name contains Name.'],
  ['NetworkUpdate', 'NetworkID:int Name Location', 'boolean', "Changes a network's name."],
  ['MailboxInfo', 'MailboxID:int', 'MailboxIDInfo', 'One mailbox.'],
  ['MailboxList', 'Name', 'ArrayOfMailboxIDInfo', 'Mailboxes whose name contains Name.'],
  ['MailboxAdd', 'Name UserID:int', 'int', "Adds a mailbox to the caller's network."],
  ['TPInfo', 'GridID:int', 'GridIDInfo', 'One trading-partner id.'],
  ['TPList', 'ShowInactive:boolean', 'ArrayOfGridIDInfo', 'Trading-partner ids of the caller.'],
  ['TPAdd', 'Qualifier ID Description', 'int', 'Adds a trading-partner id to the session mailbox.'],
  ['TPSearch', 'Qualifier ID ShowInactive:boolean', 'ArrayOfGridIDInfo', 'Finds trading-partner ids.'],
  ['TPMove', 'GridID:int MoveDateTime:dateTime', 'int', 'Moves a trading-partner id to the session mailbox.'],
  ['InterconnectInfo', 'InterconnectID:int', 'InterconnectIDInfo', 'One interconnect.'],
  [
    'InterconnectAdd',
    'GridID1:int GridID2:int Reference ContactName ContactEMail NotifyContact:boolean Preconfirm:boolean Note',
    'InterconnectIDInfo',
    'Connects two trading-partner ids.',
  ],
  ['InterconnectListByGridID', 'GridID1:int GridID2:int', 'ArrayOfInterconnectIDInfo', 'Interconnects of one or two trading-partner ids.'],
  [
    'InterconnectListByStatus',
    'Status:StatusInterconnect GridID:int MaxDays:short',
    'ArrayOfInterconnectIDInfo',
    'Interconnects with a status.',
  ],
  ['InterconnectCancel', 'InterconnectID:int Note EMailTo:eMailTo OtherEMailAddress', 'boolean', 'Cancels an interconnect.'],
  [
    'InterconnectCount',
    'GridID:int Status',
    'int',
    'Number of interconnects of a trading-partner id (of one status when Status is given).',
  ],
  [
    'InterchangeInBox',
    'BeginDate:dateTime EndDate:dateTime GridIDFrom:int GridIDTo:int InterchangeControlID',
    'ArrayOfInterchangeIDInfo',
    'Inbound interchanges in a period.',
  ],
  [
    'InterchangeOutBox',
    'BeginDate:dateTime EndDate:dateTime GridIDFrom:int GridIDTo:int InterchangeControlID',
    'ArrayOfInterchangeIDInfo',
    'Outbound interchanges in a period.',
  ],
  ['InterchangeInfo', 'InterchangeID:long', 'InterchangeIDInfo', 'One interchange.'],
  ['InterchangeResend', 'InterchangeID:long', 'InterchangeIDStatus', 'Sends an interchange again.'],
  ['InterchangeCancel', 'InterchangeID:int', 'boolean', 'Cancels an interchange not yet delivered.'],
  ['UserInfo', 'UserID:int', 'UserIDInfo', 'One user.'],
  ['UserList', 'Name', 'ArrayOfUserIDInfo', 'Users whose login contains Name.'],
  [
    'UserAdd',
    'MailboxID:int LoginName Password RecoveryQuestion RecoveryAnswer FirstName LastName Company EMail Phone CellPhone CellCarrier AuthLevel:AuthLevel',
    'int',
    'Adds a user.',
  ],
  [
    'UserUpdate',
    'UserID:int FirstName LastName Company EMail Phone CellPhone CellCarrier AuthLevel:AuthLevel',
    'boolean',
    "Changes a user's details.",
  ],
  ['UserSetAuthLevel', 'UserID:int AuthLevel:AuthLevel', 'boolean', "Changes a user's auth level."],
];

function operation([name, spec, result, doc]: readonly [string, string, string, string]): OperationDef {
  const session = !spec.startsWith('!');
  const params = fields(spec.replace(/^!/, ''));
  return {
    name,
    action: SOAP_NS + name,
    params: session ? [f('SessionID', 'string'), ...params] : params,
    result: f(`${name}Result`, result),
    session,
    doc,
  };
}

export const OPERATIONS_BY_NAME: ReadonlyMap<string, OperationDef> = new Map(OPERATIONS.map((o) => [o[0], operation(o)]));
export const ALL_OPERATIONS: readonly OperationDef[] = [...OPERATIONS_BY_NAME.values()];

export function operationByName(name: string): OperationDef | undefined {
  return OPERATIONS_BY_NAME.get(name);
}

export function typeDef(name: string): TypeDef {
  const t = TYPES.get(name);
  if (!t) throw new InternalError(`SOAP schema: unknown type ${name}`);
  return t;
}

/** The value an omitted required element stands for (the platform reads a missing value type as its zero). */
export function zeroOf(type: string): unknown {
  switch (type) {
    case 'int':
    case 'short':
    case 'float':
      return 0;
    case 'long':
      return '0';
    case 'boolean':
      return false;
    case 'dateTime':
      return null;
    default: {
      const t = TYPES.get(type);
      return t?.kind === 'enum' ? t.values[0] : null;
    }
  }
}
