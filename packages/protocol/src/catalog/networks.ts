/** Networks (6). docs/wire.md#catalog. The published alias `POST /v2/networks` (create) has no reference page and no entry. */
import { z } from 'zod';
import { Delimiter, IntId, NetworkContact, NetworkContactType, NetworkIDInfo, pageRequest, pagedObject, Status } from '../wire/index.js';
import { byId, defineGroup, PositiveId } from './endpoint.js';

const networkId = PositiveId;

export const networks = defineGroup('Networks', 'networks', {
  get: byId({
    path: '/v2/networks/{networkId}',
    response: NetworkIDInfo,
    summary: 'One network by id.',
  }),
  list: {
    method: 'POST',
    path: '/v2/networks/list',
    aliases: [{ method: 'GET', path: '/v2/networks' }],
    request: pageRequest(500).extend({ networkId: IntId.optional(), mailboxId: IntId.optional(), status: Status.optional() }).loose(),
    response: pagedObject('networks', NetworkIDInfo),
    list: { kind: 'object', key: 'networks' },
    summary: 'Networks visible to the caller (0 = all accessible), paged 1–500.',
  },
  update: {
    method: 'PUT',
    path: '/v2/networks',
    aliases: [{ method: 'PUT', path: '/v2/networks/{networkId}' }],
    request: z
      .object({
        networkId,
        companyName: z.string().optional(),
        address1: z.string().optional(),
        address2: z.string().optional(),
        city: z.string().optional(),
        state: z.string().length(2).optional(),
        zip: z.string().optional(),
        phone: z.string().optional(),
        website: z.string().optional(),
      })
      .loose(),
    response: NetworkIDInfo,
    minLevel: 'NetworkAdmin',
    summary: 'Update a network’s company data.',
  },
  getContact: {
    method: 'POST',
    path: '/v2/networks/get-contact',
    request: z.object({ networkId, contactType: NetworkContactType }).loose(),
    response: NetworkContact,
    summary: 'A network contact of one type.',
  },
  updateConfig: {
    method: 'POST',
    path: '/v2/networks/update-config',
    request: z.object({ networkId }).loose(),
    response: z.null(),
    shape: 'partial',
    minLevel: 'NetworkAdmin',
    summary: 'Set network configuration values (keys not published).',
  },
  x12Delimiters: {
    method: 'POST',
    path: '/v2/networks/x12-delimiters',
    request: z.object({ networkId, elementDelimiter: Delimiter, subElementDelimiter: Delimiter, segmentTerminator: Delimiter }).loose(),
    response: z.null(),
    minLevel: 'NetworkAdmin',
    summary: 'Set the network’s X12 delimiters (one character each).',
  },
});
