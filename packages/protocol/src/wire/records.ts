/** The records the service answers with (response side: lenient enums, unknown fields kept; docs/wire.md#records). */
import { z } from 'zod';
import { DateTime, IntId, LongId } from './scalars.js';
import {
  AuthLevel,
  CommChannel,
  EDIStandard,
  KeyVisibility,
  NetworkContactType,
  ParcelStatus,
  RoutingGroup,
  Status,
  UseType,
  lenient,
} from './enums.js';

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
