/** Carbon Copies (5): copy one mailbox's traffic to another. docs/wire.md#catalog. */
import { z } from 'zod';
import { DateTime, Direction, IntId, pageRequest, Status } from '../wire/index.js';
import { byId, defineGroup, PositiveId } from './endpoint.js';

const ccId = PositiveId;

export const CarbonCopy = z
  .object({ ccId: IntId, fromMailboxId: IntId, toMailboxId: IntId, status: z.string(), direction: z.string(), created: DateTime })
  .loose();

export const carbonCopies = defineGroup('Carbon Copies', 'carbonCopies', {
  get: byId({
    path: '/v2/carboncopies/{ccId}',
    response: CarbonCopy,
    summary: 'One carbon-copy rule by id.',
  }),
  create: {
    method: 'POST',
    path: '/v2/carboncopies/create',
    request: z.object({ fromMailboxId: IntId, toMailboxId: IntId, direction: Direction }).loose(),
    response: CarbonCopy,
    idempotent: false,
    summary: 'Copy one mailbox’s traffic (in, out or both) to another.',
    minLevel: 'NetworkAdmin',
  },
  update: {
    method: 'PUT',
    path: '/v2/carboncopies/update',
    request: z.object({ ccId, status: Status.optional(), direction: Direction.optional() }).loose(),
    response: CarbonCopy,
    summary: 'Change a carbon-copy rule.',
    minLevel: 'NetworkAdmin',
  },
  delete: byId({
    method: 'DELETE',
    path: '/v2/carboncopies/{ccId}',
    response: z.literal(true),
    summary: 'Delete a carbon-copy rule.',
    minLevel: 'NetworkAdmin',
  }),
  list: {
    method: 'POST',
    path: '/v2/carboncopies/list',
    request: pageRequest(1000).extend({ mailboxId: IntId.optional(), status: Status.optional() }).loose(),
    response: z.array(CarbonCopy),
    list: { kind: 'array' },
    summary: 'Carbon-copy rules, paged 1–1000 (paging fields beside `data` in the envelope).',
  },
});
