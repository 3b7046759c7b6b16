/**
 * Wire shapes of the Grid EDI exchange service, REST v2 — the one definition shared by the
 * client (`src/api`) and the emulator (`src/emulator`). The wire facts
 * behind them, in our words: docs/wire.md.
 *
 * Glossary
 * - network: a tenant of the service; it contains mailboxes.
 * - mailbox: where parcels arrive (inbox) and leave (outbox); gridsync syncs one or more of them
 *   with local folders. Identified by `mailboxId`.
 * - grid ID: a trading-partner ID (qualifier + identifier, as in an X12 ISA header) owned by one
 *   mailbox; identified by `gridId`. Routing goes from one grid ID to another.
 * - interconnect (partner link): joins two grid IDs; an upload is routed only over an Active one.
 * - parcel: one file sent or received through a mailbox (`parcelId`, 64-bit). Inbound parcels are
 *   `InBoxReady` until confirmed, then `InBoxTransferred`.
 * - interchange: one EDI envelope inside a parcel (X12 ISA…IEA, EDIFACT UNB…UNZ).
 * - envelope (response envelope): `{ success, data, errorCode, message }` around every response.
 * - journal states (gridsync's own, see src/journal): inbound listed → staged →
 *   placed → confirmed | failed; outbound seen → claiming → claimed → uploading → uploaded →
 *   archived | rejected | failed.
 *
 * Parsing rule: responses are parsed leniently (unknown fields and unknown enum strings are kept,
 * never fatal); requests the emulator receives are parsed strictly (unknown enum values → 400).
 */
import { z } from 'zod';

// ---------------------------------------------------------------------------------------------
// Scalars

/** 64-bit ids (parcels, interchanges): exact only up to 2^53 in JSON numbers, so refuse beyond. */
export const LongId = z
  .number()
  .int()
  .refine((n) => Number.isSafeInteger(n), { message: 'id exceeds Number.MAX_SAFE_INTEGER' });
export const IntId = z.number().int();

/** ISO 8601 datetime; the service emits UTC with `Z`, we accept offsets and fractions too. */
export const DateTime = z.string().refine((s) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/.test(s), {
  message: 'expected an ISO 8601 datetime',
});

/** A response-side enum: known values typed, unknown strings preserved (docs/wire.md#enumerations). */
function lenient<const T extends readonly [string, ...string[]]>(strict: z.ZodEnum<{ [K in T[number]]: K }>) {
  return z.union([strict, z.string()]) as unknown as z.ZodType<T[number] | (string & {})>;
}

// ---------------------------------------------------------------------------------------------
// Enumerations (strict: for requests; lenient: inside response records)

export const AUTH_LEVELS = [
  'Root',
  'TechOps',
  'NetOps',
  'NetworkAdmin',
  'NetworkUser',
  'MailboxAdmin',
  'MailboxUser',
  'TPUser',
  'General',
] as const;
export const AuthLevel = z.enum(AUTH_LEVELS);
export type AuthLevel = z.infer<typeof AuthLevel>;
/** Rank for comparisons: lower number = more power. */
export function authRank(level: AuthLevel): number {
  return AUTH_LEVELS.indexOf(level);
}

export const Status = z.enum(['Development', 'Active', 'Preproduction', 'Suspended', 'Terminated']);
export type Status = z.infer<typeof Status>;

export const ParcelStatus = z.enum([
  'InBoxReady',
  'InBoxTransferred',
  'InBoxArchived',
  'outboxPending',
  'outboxSent',
  'outboxAcknowledged',
  'outboxRetry',
  'outboxFailed',
  'outboxDeliveryError',
  'outboxTransferred',
  'OutBoxDelivered',
  'as2Receive',
  'as2Sent',
  'ftpReceived',
  'ftpSent',
  'Cancelled',
  'VaultReady',
]);
export type ParcelStatus = z.infer<typeof ParcelStatus>;

export const EDIStandard = z.enum(['X12', 'EDIFACT', 'TRADACOMS', 'VDA', 'XML', 'TXT', 'PDF', 'Binary']);
export const RoutingGroup = z.enum([
  'ProductionA',
  'ProductionB',
  'Test',
  'ManagedFileTransfer',
  'Migration1',
  'Migration2',
  'SuperHub',
  'Suspense1',
  'Suspense2',
  'Suspense3',
  'NetOpsOnly1',
  'NetOpsOnly2',
]);
export const UseType = z.enum(['Undefined', 'Test', 'Production', 'TestAndProduction']);
export const CommChannel = z.enum([
  'none',
  'ftp',
  'sftp',
  'as2',
  'http',
  'oftp',
  'x400',
  'gisb',
  'rnif',
  'cxml',
  'ftpsslimplicit',
  'peppol',
  'as4',
  'undefined',
]);
export const Objects = z.enum([
  'System',
  'User',
  'Network',
  'Mailbox',
  'GridID',
  'Interconnect',
  'Migration',
  'Parcel',
  'Interchange',
  'CarbonCopy',
  'CallBackEvent',
  'AS2',
  'Comm',
  'GISB',
  'InterconnectNote',
  'ParcelNotes',
  'PriceList',
  'Contract',
  'Invoice',
]);
export const Direction = z.enum(['NoDir', 'OutBox', 'InBox']);
export const KeyVisibility = z.enum(['Private', 'Shared', 'Public', 'Session']);
export const HTTPAuthType = z.enum(['None', 'Basic', 'Digest']);
export const StatisticsPeriod = z.enum(['Hour', 'Day', 'Week', 'Month']);
export const NetworkContactType = z.enum(['Owner', 'Errors', 'Interconnects', 'Notices', 'Reports', 'Accounting', 'CustomerService']);
export const CertificateType = z.enum(['X509', 'PGP', 'SSH']);
export const CertificateUsage = z.enum(['SSL', 'Encryption', 'Signature', 'EncryptionAndSignature']);
export const SecureHashAlgorithm = z.enum(['SHA1', 'SHA256', 'SHA384', 'SHA512']);
export const CallbackDeliveryStatus = z.enum(['Active', 'Pending', 'Completed', 'Error', 'Canceled']);

// ---------------------------------------------------------------------------------------------
// Envelope and errors

/** Every response. `errorCode`/`message` may be "", null or absent on success (docs/wire.md#envelope). */
export const Envelope = z
  .object({
    success: z.boolean(),
    data: z.unknown().optional(),
    errorCode: z.string().nullish(),
    message: z.string().nullish(),
  })
  .loose();
export type Envelope = z.infer<typeof Envelope>;

export const ERROR_CODES = [
  'InvalidSession',
  'InvalidAPIKey',
  'InvalidParameter',
  'AccessDenied',
  'ObjectNotFound',
  'DuplicateObject',
  'RateLimitExceeded',
  'InternalError',
] as const;
/** The published codes, typed; a code the service invents later is preserved as a string. */
export type ErrorCode = (typeof ERROR_CODES)[number] | (string & {});

/** The HTTP status each published errorCode travels with (docs/wire.md#errors). */
export const ERROR_STATUS: Record<(typeof ERROR_CODES)[number], number> = {
  InvalidSession: 401,
  InvalidAPIKey: 401,
  InvalidParameter: 400,
  AccessDenied: 403,
  ObjectNotFound: 404,
  DuplicateObject: 400,
  RateLimitExceeded: 429,
  InternalError: 500,
};

// ---------------------------------------------------------------------------------------------
// Pagination

/** Paging fields with the upper bound of one list (docs/wire.md#limits). */
export function pageRequest(maxRecordsPerPage: number) {
  return z.object({
    pageNo: z.number().int().min(1).optional(),
    recordsPerPage: z.number().int().min(1).max(maxRecordsPerPage).optional(),
  });
}

/** auth rule 7 (docs/wire.md#authentication): lower, upper, digit and a non-alphanumeric; no maximum length. */
export const Password = z.string().refine((p) => /[a-z]/.test(p) && /[A-Z]/.test(p) && /\d/.test(p) && /[^A-Za-z0-9]/.test(p), {
  message: 'must contain a lowercase letter, an uppercase letter, a digit and a character that is not a letter or digit',
});

/** One X12 delimiter character. */
export const Delimiter = z.string().length(1, 'must be exactly one character');

/** The object list shape: `{ totalRecords, pageNo, recordsPerPage, <key>: T[] }`. */
export function pagedObject<K extends string, T extends z.ZodType>(key: K, item: T) {
  return z
    .object({
      totalRecords: z.number().int(),
      pageNo: z.number().int(),
      recordsPerPage: z.number().int(),
      [key]: z.array(item),
    } as { totalRecords: z.ZodNumber; pageNo: z.ZodNumber; recordsPerPage: z.ZodNumber } & { [P in K]: z.ZodArray<T> })
    .loose();
}

// ---------------------------------------------------------------------------------------------
// Records (response side: lenient enums, unknown fields kept)

export const ParcelIDInfo = z
  .object({
    parcelId: LongId,
    mailboxId: IntId,
    networkId: IntId.optional(),
    fileName: z.string().nullish(),
    bytes: z.number().int().nonnegative().optional(),
    status: lenient(ParcelStatus).optional(),
    gridIdFrom: IntId.optional(),
    gridIdTo: IntId.optional(),
    created: DateTime.optional(),
    modified: DateTime.optional(),
  })
  .loose();
export type ParcelIDInfo = z.infer<typeof ParcelIDInfo>;

export const UserIDInfo = z
  .object({
    userId: IntId,
    login: z.string(),
    email: z.string().nullish(),
    firstName: z.string().nullish(),
    lastName: z.string().nullish(),
    networkId: IntId,
    mailboxId: IntId,
    authLevel: lenient(AuthLevel),
    status: lenient(Status),
    created: DateTime.optional(),
  })
  .loose();
export type UserIDInfo = z.infer<typeof UserIDInfo>;

export const NetworkIDInfo = z
  .object({
    networkId: IntId,
    uniqueId: z.string(),
    companyName: z.string(),
    status: lenient(Status),
    created: DateTime.optional(),
    modified: DateTime.optional(),
  })
  .loose();

export const MailboxIDInfo = z
  .object({
    mailboxId: IntId,
    networkId: IntId,
    uniqueId: z.string(),
    companyName: z.string(),
    status: lenient(Status),
    created: DateTime.optional(),
    modified: DateTime.optional(),
  })
  .loose();

export const GridIDInfo = z
  .object({
    gridId: IntId,
    mailboxId: IntId,
    networkId: IntId,
    qualifier: z.string(),
    id: z.string(),
    description: z.string().nullish(),
    status: lenient(Status),
    routingGroup: lenient(RoutingGroup),
    ediStandard: lenient(EDIStandard),
  })
  .loose();

export const InterconnectIDInfo = z
  .object({
    interconnectId: IntId,
    gridIdFrom: IntId,
    gridIdTo: IntId,
    status: lenient(Status),
    created: DateTime.optional(),
    modified: DateTime.optional(),
  })
  .loose();

export const CommIDInfo = z
  .object({
    commId: IntId,
    mailboxId: IntId,
    commType: lenient(CommChannel),
    identifier: z.string(),
    status: lenient(Status),
    useType: lenient(UseType),
    privateKeyRequired: z.boolean(),
    withCerts: z.boolean(),
  })
  .loose();

export const KeyRecord = z
  .object({
    keyId: IntId,
    userId: IntId,
    key: z.string(),
    visibility: lenient(KeyVisibility),
    created: DateTime.optional(),
  })
  .loose();

export const NetworkContact = z
  .object({
    networkId: IntId,
    contactType: lenient(NetworkContactType),
    name: z.string().nullish(),
    email: z.string().nullish(),
    phone: z.string().nullish(),
  })
  .loose();

export const SessionInfo = z
  .object({
    userId: IntId,
    login: z.string(),
    networkId: IntId,
    mailboxId: IntId,
    authLevel: lenient(AuthLevel),
    expiresAt: DateTime.nullish(),
  })
  .loose();
export type SessionInfo = z.infer<typeof SessionInfo>;

export const LoginResult = z
  .object({
    token: z.string().min(1),
    expiresAt: DateTime,
    userId: IntId.optional(),
    refreshToken: z.string().optional(),
  })
  .loose();
export type LoginResult = z.infer<typeof LoginResult>;

export const VersionInfo = z.object({ version: z.string() }).loose();

/** Download payload; one guide uses `size` for `bytes` (docs/wire.md#ep-download): accept both. */
export const DownloadResult = z
  .object({
    parcelId: LongId,
    fileName: z.string().nullish(),
    content: z.string(),
    bytes: z.number().int().nonnegative().optional(),
    size: z.number().int().nonnegative().optional(),
    contentEncoding: z.string().optional(),
  })
  .loose();

/** Upload answers a bare parcelId, or (one guide) an object carrying it (docs/wire.md#records). */
export const UploadResult = z.union([
  LongId,
  z
    .object({ parcelId: LongId })
    .loose()
    .transform((o) => o.parcelId),
]);

/** Confirm answers `true`, or (one guide) `{ parcelId, status }` (docs/wire.md#confirm). */
export const ConfirmResult = z.union([z.literal(true), z.object({ parcelId: LongId }).loose()]);

export const CallbackRegistration = z
  .object({
    callbackId: IntId,
    url: z.string(),
    event: lenient(Objects),
    mailboxId: IntId.nullish(),
    networkId: IntId.nullish(),
    httpAuthType: lenient(HTTPAuthType).optional(),
    status: lenient(Status),
  })
  .loose();

export const CallbackEvent = z
  .object({
    callbackEventId: IntId,
    callbackId: IntId,
    event: lenient(Objects),
    mailboxId: IntId.nullish(),
    objectId: z.number().int(),
    status: z.string().nullish(),
    created: DateTime.optional(),
    delivered: DateTime.nullish(),
    httpStatus: z.number().int().nullish(),
  })
  .loose();

export const CallbackEventDetail = CallbackEvent.extend({
  payload: z.string().nullish(),
  attempts: z.number().int().optional(),
  lastAttempt: DateTime.nullish(),
});

export const CallbackQueueEntry = z
  .object({
    callbackId: IntId,
    url: z.string(),
    event: lenient(Objects),
    mailboxId: IntId.nullish(),
    queuedAt: DateTime.nullish(),
    lastAttempt: DateTime.nullish(),
    attempts: z.number().int(),
    status: lenient(CallbackDeliveryStatus),
    lastHttpStatus: z.number().int().nullish(),
  })
  .loose();

export const CallbackTestResult = z
  .object({
    callbackId: IntId,
    url: z.string(),
    httpStatus: z.number().int(),
    responseBody: z.string().nullish(),
    testedAt: DateTime,
  })
  .loose();

export const InterchangeIDInfo = z
  .object({
    interchangeId: LongId,
    parcelId: LongId,
    sender: z.string(),
    receiver: z.string(),
    standard: lenient(EDIStandard),
    documentType: z.string().nullish(),
    status: z.string(),
    created: DateTime.optional(),
  })
  .loose();

export const ParcelManifestRow = z
  .object({
    interchangeId: LongId,
    sender: z.string(),
    receiver: z.string(),
    documentType: z.string().nullish(),
    count: z.number().int(),
  })
  .loose();

export const MonthlyReportRow = z
  .object({ week: z.number().int(), sent: z.number().int(), received: z.number().int(), totalBytes: z.number() })
  .loose();

export const TrafficStatsRow = z
  .object({
    periodStart: DateTime,
    periodEnd: DateTime,
    sentCount: z.number().int(),
    receivedCount: z.number().int(),
    totalBytes: z.number(),
  })
  .loose();

export const StatusListItem = z.object({ code: z.string(), description: z.string() }).loose();

/** A record whose fields the reference does not show: an object, typed as far as known. */
export const UnknownRecord = z.record(z.string(), z.unknown());
