/** Interchanges (8): the EDI envelopes (ISA…IEA, UNB…UNZ) inside parcels. docs/wire.md#catalog. */
import { z } from 'zod';
import { DateTime, IntId, InterchangeIDInfo, LongId, pageRequest, pagedObject } from '../wire/index.js';
import { byId, defineGroup } from './endpoint.js';

const interchangeId = LongId.refine((n) => n > 0, 'must be positive');
const listRequest = pageRequest(500)
  .extend({
    mailboxId: IntId.optional(),
    gridIdFrom: IntId.optional(),
    gridIdTo: IntId.optional(),
    beginDate: DateTime.optional(),
    endDate: DateTime.optional(),
  })
  .loose();

/** The 16 ISA elements, named as the reference names them. */
export const ISA_FIELDS = [
  'authorizationInfoQualifier',
  'authorizationInfo',
  'securityInfoQualifier',
  'securityInfo',
  'senderIdQualifier',
  'senderId',
  'receiverIdQualifier',
  'receiverId',
  'interchangeDate',
  'interchangeTime',
  'repetitionSeparator',
  'interchangeControlVersion',
  'interchangeControlNumber',
  'acknowledgmentRequested',
  'usageIndicator',
  'componentElementSeparator',
] as const;

export const interchanges = defineGroup('Interchanges', 'interchanges', {
  get: byId(
    {
      path: '/v2/interchanges/{interchangeId}',
      response: InterchangeIDInfo,
      summary: 'One interchange by id.',
    },
    interchangeId,
  ),
  inboxList: {
    method: 'POST',
    path: '/v2/interchanges/inbox-list',
    request: listRequest,
    response: pagedObject('interchanges', InterchangeIDInfo),
    list: { kind: 'object', key: 'interchanges' },
    summary: 'Inbound interchanges, paged ≤ 500 (default 100).',
  },
  outboxList: {
    method: 'POST',
    path: '/v2/interchanges/outbox-list',
    request: listRequest,
    response: pagedObject('interchanges', InterchangeIDInfo),
    list: { kind: 'object', key: 'interchanges' },
    summary: 'Outbound interchanges, paged ≤ 500 (default 100).',
  },
  cancel: {
    method: 'POST',
    path: '/v2/interchanges/cancel/{interchangeId}',
    aliases: [{ method: 'POST', path: '/v2/interchanges/{interchangeId}/cancel' }],
    request: z.object({ interchangeId }).loose(),
    response: z.literal(true),
    summary: 'Cancel an undelivered interchange.',
  },
  resend: {
    method: 'POST',
    path: '/v2/interchanges/resend/{interchangeId}',
    aliases: [{ method: 'POST', path: '/v2/interchanges/{interchangeId}/resend' }],
    request: z.object({ interchangeId }).loose(),
    response: z.literal(true),
    idempotent: false,
    summary: 'Deliver an interchange again.',
  },
  getManifest: byId(
    {
      path: '/v2/interchanges/get-manifest/{interchangeId}',
      response: z.array(
        z
          .object({
            functionalGroup: z.string(),
            transactionSetType: z.string(),
            transactionSetCount: z.number().int(),
            groupControlNumber: z.string(),
          })
          .loose(),
      ),
      summary: 'Functional groups and transaction sets of an interchange.',
    },
    interchangeId,
  ),
  getHeader: {
    method: 'POST',
    path: '/v2/interchanges/get-header',
    request: z.object({ interchangeHeader: z.string().min(1) }).loose(),
    response: z
      .object(Object.fromEntries(ISA_FIELDS.map((f) => [f, z.string()])) as Record<(typeof ISA_FIELDS)[number], z.ZodString>)
      .loose(),
    summary: 'The 16 ISA elements of an interchange header, as strings.',
  },
  getDate: {
    method: 'POST',
    path: '/v2/interchanges/get-date',
    request: z.object({ interchangeHeader: z.string().min(1) }).loose(),
    response: DateTime,
    summary: 'The date and time of an interchange header.',
  },
});
