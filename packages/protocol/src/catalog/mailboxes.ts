/** Mailboxes (7). docs/wire.md#records, docs/wire.md#catalog. */
import { z } from 'zod';
import { Delimiter, IntId, MailboxIDInfo, pageRequest, pagedObject, Status } from '../wire/index.js';
import { byId, defineGroup, PositiveId } from './endpoint.js';

const mailboxId = PositiveId;

export const mailboxes = defineGroup('Mailboxes', 'mailboxes', {
  get: byId({
    path: '/v2/mailboxes/{mailboxId}',
    response: MailboxIDInfo,
    summary: 'One mailbox by id.',
  }),
  list: {
    method: 'POST',
    path: '/v2/mailboxes/list',
    aliases: [{ method: 'GET', path: '/v2/mailboxes' }],
    request: pageRequest(500).extend({ networkId: IntId.optional(), status: Status.optional() }).loose(),
    response: pagedObject('mailboxes', MailboxIDInfo),
    list: { kind: 'object', key: 'mailboxes' },
    summary: 'Mailboxes visible to the caller, paged 1–500.',
  },
  create: {
    method: 'POST',
    path: '/v2/mailboxes/create',
    aliases: [{ method: 'POST', path: '/v2/mailboxes' }],
    request: z.object({ networkId: IntId, uniqueId: z.string().min(1).max(12), companyName: z.string().min(1) }).loose(),
    response: MailboxIDInfo,
    idempotent: false,
    minLevel: 'NetworkAdmin',
    summary: 'Create a mailbox in a network.',
  },
  update: {
    method: 'POST',
    path: '/v2/mailboxes/update',
    request: z.object({ mailboxId, companyName: z.string().optional() }).loose(),
    response: MailboxIDInfo,
    minLevel: 'MailboxAdmin',
    summary: 'Rename a mailbox.',
  },
  updateConfig: {
    method: 'POST',
    path: '/v2/mailboxes/update-config',
    request: z.object({ mailboxId, deleteOnDownload: z.boolean().optional(), inBoxTimeout: z.number().int().optional() }).loose(),
    response: z.null(),
    shape: 'partial',
    minLevel: 'MailboxAdmin',
    summary: 'Set mailbox configuration values (deleteOnDownload, inBoxTimeout, …).',
  },
  x12Delimiters: {
    method: 'POST',
    path: '/v2/mailboxes/x12-delimiters',
    request: z.object({ mailboxId, elementDelimiter: Delimiter, subElementDelimiter: Delimiter, segmentTerminator: Delimiter }).loose(),
    response: z.null(),
    minLevel: 'MailboxAdmin',
    summary: 'Set the mailbox’s X12 delimiters (one character each).',
  },
  delete: byId({
    method: 'DELETE',
    path: '/v2/mailboxes/{mailboxId}',
    response: z.null(),
    minLevel: 'NetworkAdmin',
    summary: 'Terminate a mailbox.',
  }),
});
