/** Grid IDs (13): trading-partner identities (qualifier + id). docs/wire.md#catalog. */
import { z } from 'zod';
import { Delimiter, EDIStandard, GridIDInfo, IntId, pageRequest, RoutingGroup, Status } from '../wire/index.js';
import { defineGroup, PositiveId } from './endpoint.js';

const gridId = PositiveId;
const gridIdBody = z.object({ gridId });

export const ids = defineGroup('IDs', 'ids', {
  get: {
    method: 'GET',
    path: '/v2/ids/{gridId}',
    request: gridIdBody.loose(),
    response: GridIDInfo,
    summary: 'One grid ID by id.',
  },
  create: {
    method: 'POST',
    path: '/v2/ids',
    request: z
      .object({
        mailboxId: IntId,
        qualifier: z.string().min(1),
        id: z.string().min(1),
        description: z.string().optional(),
        ediStandard: EDIStandard.optional(),
        routingGroup: RoutingGroup.optional(),
      })
      .loose(),
    response: GridIDInfo,
    idempotent: false,
    summary: 'Create a grid ID (qualifier + id) in a mailbox; new grid IDs are Active.',
    minLevel: 'MailboxAdmin',
  },
  update: {
    method: 'PUT',
    path: '/v2/ids/{gridId}',
    request: gridIdBody
      .extend({ description: z.string().optional(), status: Status.optional(), ediStandard: EDIStandard.optional() })
      .loose(),
    response: GridIDInfo,
    summary: 'Update a grid ID’s description, status or EDI standard.',
    minLevel: 'MailboxAdmin',
  },
  delete: {
    method: 'DELETE',
    path: '/v2/ids/{gridId}',
    request: gridIdBody.loose(),
    response: z.literal(true),
    summary: 'Terminate a grid ID.',
    minLevel: 'MailboxAdmin',
  },
  find: {
    method: 'POST',
    path: '/v2/ids/find',
    aliases: [{ method: 'GET', path: '/v2/ids/find' }],
    request: z.object({ qualifier: z.string().min(1), id: z.string().min(1) }).loose(),
    response: z.array(GridIDInfo),
    summary: 'Find grid IDs by qualifier and id.',
  },
  list: {
    method: 'POST',
    path: '/v2/ids/list',
    aliases: [{ method: 'GET', path: '/v2/ids' }],
    request: pageRequest(500).extend({ mailboxId: IntId.optional(), networkId: IntId.optional(), status: Status.optional() }).loose(),
    response: z.array(GridIDInfo),
    list: { kind: 'array' },
    summary: 'Grid IDs of a mailbox or network, paged.',
  },
  updateConfig: {
    method: 'POST',
    path: '/v2/ids/update-config',
    request: gridIdBody.loose(),
    response: z.literal(true),
    shape: 'partial',
    summary: 'Set grid ID configuration values (keys not published).',
    minLevel: 'MailboxAdmin',
  },
  tpAddVan: {
    method: 'POST',
    path: '/v2/ids/tp-add-van',
    request: gridIdBody
      .extend({
        vanQualifier: z.string().regex(/^[A-Za-z0-9]{1,4}$/, 'must be 1 to 4 letters or digits'),
        vanId: z.string().min(1).max(35),
      })
      .loose(),
    response: z.literal(true),
    idempotent: false,
    summary: 'Add a VAN identity to a trading partner.',
    minLevel: 'MailboxAdmin',
  },
  tpGetMailboxDefault: {
    method: 'POST',
    path: '/v2/ids/tp-get-mailbox-default',
    request: gridIdBody.loose(),
    response: z.object({ mailboxId: IntId, networkId: IntId, mailboxName: z.string(), status: z.string() }).loose(),
    summary: 'The default mailbox of a trading partner.',
  },
  tpMove: {
    method: 'POST',
    path: '/v2/ids/tp-move',
    aliases: [{ method: 'POST', path: '/v2/ids/{gridId}/move-tp' }],
    request: gridIdBody.extend({ newMailboxId: IntId }).loose(),
    response: GridIDInfo,
    minLevel: 'NetworkAdmin',
    summary: 'Move a trading partner to another mailbox.',
  },
  tpUpdateDataEmail: {
    method: 'POST',
    path: '/v2/ids/tp-update-data-email',
    request: gridIdBody
      .extend({
        email: z.string().min(3),
        emailSystem: z.enum(['smtp', 'x400']).optional(),
        emailPayload: z.enum(['Body', 'Attachment']).optional(),
      })
      .loose(),
    response: z.literal(true),
    summary: 'Set a trading partner’s data e-mail.',
    minLevel: 'MailboxAdmin',
  },
  tpUpdateDescription: {
    method: 'POST',
    path: '/v2/ids/tp-update-description',
    request: gridIdBody.extend({ description: z.string().min(1) }).loose(),
    response: z.literal(true),
    summary: 'Set a trading partner’s description.',
    minLevel: 'MailboxAdmin',
  },
  tpX12Delimiters: {
    method: 'POST',
    path: '/v2/ids/tp-x12-delimiters',
    request: gridIdBody.extend({ elementDelimiter: Delimiter, subElementDelimiter: Delimiter, segmentTerminator: Delimiter }).loose(),
    response: z.literal(true),
    summary: 'Set a trading partner’s X12 delimiters (one character each).',
    minLevel: 'MailboxAdmin',
  },
});
