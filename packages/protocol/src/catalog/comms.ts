/** Comms (8): communication channels (AS2, SFTP, …) of mailboxes. docs/wire.md#catalog. */
import { z } from 'zod';
import { CommChannel, CommIDInfo, IntId, Status, UseType } from '../wire/index.js';
import { byId, defineGroup, PositiveId } from './endpoint.js';

const commId = PositiveId;
const pair = z.object({ gridIdFrom: IntId, gridIdTo: IntId });

export const comms = defineGroup('Comms', 'comms', {
  get: byId({
    path: '/v2/comms/{commId}',
    response: CommIDInfo,
    summary: 'One channel by id.',
  }),
  list: {
    method: 'POST',
    path: '/v2/comms/list',
    request: z
      .object({
        commType: CommChannel.optional(),
        privateKeyRequired: z.boolean().optional(),
        useType: UseType.optional(),
        showInactive: z.boolean().optional(),
        withCerts: z.boolean().optional(),
      })
      .loose(),
    response: z.array(CommIDInfo),
    summary: 'Channels, filtered by type, use, certificates; inactive ones only with showInactive.',
  },
  find: {
    method: 'POST',
    path: '/v2/comms/find',
    request: z.object({ identifier: z.string().min(1), commType: CommChannel.optional() }).loose(),
    response: z.array(CommIDInfo),
    summary: 'Channels by identifier.',
  },
  create: {
    method: 'POST',
    path: '/v2/comms/create',
    request: z.object({ mailboxId: IntId, commType: CommChannel, identifier: z.string().min(1), useType: UseType.optional() }).loose(),
    response: CommIDInfo,
    idempotent: false,
    summary: 'Create a channel for a mailbox.',
    minLevel: 'MailboxAdmin',
  },
  update: {
    method: 'PUT',
    path: '/v2/comms/update',
    request: z.object({ commId, identifier: z.string().optional(), status: Status.optional() }).loose(),
    response: CommIDInfo,
    summary: 'Change a channel’s identifier or status.',
    minLevel: 'MailboxAdmin',
  },
  updateConfig: {
    method: 'PUT',
    path: '/v2/comms/update-config',
    request: z.object({ commId }).loose(),
    response: z.literal(true),
    shape: 'partial',
    summary: 'Set channel configuration values (keys not published).',
    minLevel: 'MailboxAdmin',
  },
  pair: {
    method: 'POST',
    path: '/v2/comms/pair',
    request: pair.loose(),
    response: z.array(CommIDInfo),
    summary: 'Channels used between two grid IDs.',
  },
  setPair: {
    method: 'POST',
    path: '/v2/comms/set-pair',
    request: pair.extend({ commId: IntId.optional() }).loose(),
    response: z.array(CommIDInfo),
    summary: 'Choose the channel used between two grid IDs.',
    minLevel: 'MailboxAdmin',
  },
});
