/** Portals (2): the web portal of a mailbox. docs/wire.md#catalog. */
import { z } from 'zod';
import { DateTime, IntId } from '../wire/index.js';
import { defineGroup } from './endpoint.js';

export const Portal = z.object({ portalId: IntId, mailboxId: IntId, url: z.string(), status: z.string(), created: DateTime }).loose();

export const portals = defineGroup('Portals', 'portals', {
  create: {
    method: 'POST',
    path: '/v2/portals/create',
    request: z.object({ mailboxId: IntId }).loose(),
    response: Portal,
    idempotent: false,
    summary: 'Create the web portal of a mailbox.',
    minLevel: 'MailboxAdmin',
  },
  byMailbox: {
    method: 'GET',
    path: '/v2/portals/by-mailbox/{mailboxId}',
    request: z.object({ mailboxId: IntId }).loose(),
    response: Portal,
    summary: 'The web portal of a mailbox.',
  },
});
