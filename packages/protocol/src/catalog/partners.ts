/** Partners (7): interconnects between two grid IDs; routing needs an Active one. docs/wire.md#catalog. */
import { z } from 'zod';
import { DateTime, IntId, InterconnectIDInfo, pageRequest, Status } from '../wire/index.js';
import { byId, defineGroup, PositiveId } from './endpoint.js';

const interconnectId = PositiveId;

export const partners = defineGroup('Partners', 'partners', {
  get: byId({
    path: '/v2/partners/{interconnectId}',
    response: InterconnectIDInfo,
    summary: 'One interconnect by id.',
  }),
  create: {
    method: 'POST',
    path: '/v2/partners',
    request: z.object({ gridIdFrom: IntId, gridIdTo: IntId }).loose(),
    response: InterconnectIDInfo,
    idempotent: false,
    summary: 'Interconnect two grid IDs.',
    minLevel: 'MailboxAdmin',
  },
  delete: byId({
    method: 'DELETE',
    path: '/v2/partners/{interconnectId}',
    response: z.literal(true),
    summary: 'Cancel an interconnect.',
    minLevel: 'MailboxAdmin',
  }),
  count: {
    method: 'POST',
    path: '/v2/partners/count',
    aliases: [{ method: 'GET', path: '/v2/partners/count' }],
    request: z.object({ gridId: IntId, status: Status.optional() }).loose(),
    response: z.number().int(),
    summary: 'Number of interconnects of a grid ID.',
  },
  list: {
    method: 'POST',
    path: '/v2/partners/list',
    aliases: [{ method: 'GET', path: '/v2/partners' }],
    request: pageRequest(500).extend({ gridId: IntId, status: Status.optional() }).loose(),
    response: z.array(InterconnectIDInfo),
    list: { kind: 'array' },
    summary: 'Interconnects of a grid ID, paged.',
  },
  note: {
    method: 'POST',
    path: '/v2/partners/note',
    request: z.object({ interconnectId, note: z.string().min(1) }).loose(),
    response: z.literal(true),
    idempotent: false,
    summary: 'Add a note to an interconnect.',
  },
  noteList: {
    method: 'POST',
    path: '/v2/partners/notelist',
    request: z.object({ interconnectId }).loose(),
    response: z.array(z.object({ text: z.string(), timestamp: DateTime, userId: IntId }).loose()),
    summary: 'Notes of an interconnect.',
  },
});
