/**
 * The enumerations of the wire: strict for requests (an unknown value is refused), lenient inside
 * response records (docs/wire.md#enumerations).
 */
import { z } from 'zod';

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

/** A response-side enum: known values typed, unknown strings preserved (docs/wire.md#enumerations). */
export function lenient<const T extends readonly [string, ...string[]]>(strict: z.ZodEnum<{ [K in T[number]]: K }>) {
  return z.union([strict, z.string()]) as unknown as z.ZodType<T[number] | (string & {})>;
}
