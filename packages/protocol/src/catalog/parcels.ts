/** Parcels (15): upload, download, inbox/outbox lists, confirmation, manifest. docs/wire.md#catalog. */
import { z } from 'zod';
import {
  ConfirmResult,
  DateTime,
  DownloadResult,
  IntId,
  LongId,
  pageRequest,
  ParcelIDInfo,
  ParcelManifestRow,
  ParcelStatus,
  UploadResult,
} from '../wire/index.js';
import { byId, defineGroup } from './endpoint.js';

const parcelIdBody = z.object({ parcelId: LongId.refine((n) => n > 0, 'must be positive') }).loose();

// Bounds of the parcel lists are not published; the emulator allows 1–500 (docs/wire.md#limits).
const parcelListFilter = pageRequest(500)
  .extend({
    mailboxId: IntId.optional(),
    gridIdFrom: IntId.optional(),
    gridIdTo: IntId.optional(),
    status: ParcelStatus.optional(),
    beginDate: DateTime.optional(),
    endDate: DateTime.optional(),
  })
  .loose();

/** Upload request. `content` is base64 of the raw bytes; the client streams it (src/api/parcel-stream.ts). */
export const UploadRequest = z
  .object({
    fileName: z.string().min(1),
    content: z.string(),
    bytes: z.number().int().nonnegative().optional(),
    gridIdFrom: IntId.optional(),
    gridIdTo: IntId.optional(),
    mailboxId: IntId.optional(),
  })
  .loose();
export type UploadRequest = z.infer<typeof UploadRequest>;

export const parcels = defineGroup('Parcels', 'parcels', {
  upload: {
    method: 'POST',
    path: '/v2/parcels/upload',
    request: UploadRequest,
    response: UploadResult,
    idempotent: false,
    summary: 'Upload a file (base64 content); routed by gridIdFrom/gridIdTo or the EDI envelope. Returns the new parcelId.',
  },
  download: {
    method: 'POST',
    path: '/v2/parcels/download',
    request: parcelIdBody,
    response: DownloadResult,
    summary: 'Download a parcel: { parcelId, fileName, bytes, content (base64) }.',
  },
  confirm: {
    method: 'POST',
    path: '/v2/parcels/confirm',
    request: parcelIdBody,
    response: ConfirmResult,
    summary: 'Confirm a downloaded parcel was stored: InBoxReady → InBoxTransferred. Idempotent.',
  },
  get: byId(
    {
      path: '/v2/parcels/{parcelId}',
      response: ParcelIDInfo,
      summary: 'One parcel with its status.',
    },
    LongId,
  ),
  inboxList: {
    method: 'POST',
    path: '/v2/parcels/inbox-list',
    request: parcelListFilter,
    response: z.array(ParcelIDInfo),
    list: { kind: 'array' },
    summary: 'Inbound parcels; without a status filter only those not yet confirmed.',
  },
  outboxList: {
    method: 'POST',
    path: '/v2/parcels/outbox-list',
    request: parcelListFilter,
    response: z.array(ParcelIDInfo),
    list: { kind: 'array' },
    summary: 'Outbound parcels (used to reconcile an upload whose outcome is unknown).',
  },
  pendingInboxList: {
    method: 'POST',
    path: '/v2/parcels/pending-inbox-list',
    request: z.object({ mailboxId: IntId.optional() }).loose(),
    response: z.array(ParcelIDInfo),
    summary: 'Exactly the InBoxReady parcels of a mailbox; no paging.',
  },
  findMailbagControlId: {
    method: 'POST',
    path: '/v2/parcels/find-mailbagcontrolid',
    request: z.object({ mailboxId: IntId.optional(), mailbagControlId: z.string().min(1) }).loose(),
    response: z.array(ParcelIDInfo),
    summary: 'Parcels whose mailbag control id matches exactly (several may).',
  },
  setMailbagControlId: {
    method: 'POST',
    path: '/v2/parcels/set-mailbagcontrolid',
    request: z.object({ parcelId: LongId, mailbagControlId: z.string().min(1) }).loose(),
    response: z.literal(true),
    summary: 'Attach a mailbag control id (a free tracking string) to a parcel.',
  },
  manifest: byId(
    {
      path: '/v2/parcels/manifest/{parcelId}',
      response: z.array(ParcelManifestRow),
      summary: 'Interchanges inside a parcel.',
    },
    LongId,
  ),
  cancel: byId(
    {
      method: 'POST',
      path: '/v2/parcels/cancel/{parcelId}',
      aliases: [{ method: 'POST', path: '/v2/parcels/{parcelId}/cancel' }],
      response: z.literal(true),
      summary: 'Cancel an outbound parcel not yet delivered.',
    },
    LongId,
  ),
  resetToInbox: byId(
    {
      method: 'POST',
      path: '/v2/parcels/reset-to-inbox/{parcelId}',
      aliases: [{ method: 'POST', path: '/v2/parcels/{parcelId}/reset-to-inbox' }],
      response: z.literal(true),
      summary: 'Put a confirmed inbound parcel back to InBoxReady (it will be delivered again).',
    },
    LongId,
  ),
  update: {
    method: 'POST',
    path: '/v2/parcels/update',
    request: z.object({ parcelId: LongId, status: ParcelStatus.optional() }).loose(),
    response: ParcelIDInfo,
    shape: 'partial',
    summary: 'Update a parcel (status).',
  },
  acknowledgmentNote: {
    method: 'POST',
    path: '/v2/parcels/acknowledgment-note',
    request: z.object({ parcelId: LongId, note: z.string().min(1) }).loose(),
    response: z.literal(true),
    idempotent: false,
    summary: 'Attach an acknowledgment note to a parcel.',
  },
  sendTestFile: {
    method: 'POST',
    path: '/v2/parcels/send-test-file',
    request: z.object({ gridIdFrom: IntId, gridIdTo: IntId, documentType: z.string().optional() }).loose(),
    response: LongId,
    idempotent: false,
    summary: 'Have the service send a test file between two grid IDs; returns the parcelId.',
  },
});
