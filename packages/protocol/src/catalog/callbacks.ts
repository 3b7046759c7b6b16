/** Callbacks (8): webhook registrations, their events and delivery queue. docs/wire.md#catalog. */
import { z } from 'zod';
import {
  CallbackDeliveryStatus,
  CallbackEvent,
  CallbackEventDetail,
  CallbackQueueEntry,
  CallbackRegistration,
  CallbackTestResult,
  DateTime,
  HTTPAuthType,
  IntId,
  Objects,
  pageRequest,
  pagedObject,
  Status,
} from '../wire/index.js';
import { defineGroup, PositiveId } from './endpoint.js';

const callbackId = PositiveId;
const httpsUrl = z.url().refine((u) => u.startsWith('https://'), 'must be an https:// URL');

export const callbacks = defineGroup('Callbacks', 'callbacks', {
  create: {
    method: 'POST',
    path: '/v2/callbacks/create',
    request: z
      .object({
        url: httpsUrl,
        event: Objects,
        mailboxId: IntId.optional(),
        networkId: IntId.optional(),
        httpAuthType: HTTPAuthType.optional(),
        username: z.string().optional(),
        password: z.string().optional(),
      })
      .loose(),
    response: CallbackRegistration,
    idempotent: false,
    summary: 'Register an https callback for one event kind, optionally scoped to a mailbox or network.',
  },
  update: {
    method: 'POST',
    path: '/v2/callbacks/update',
    request: z
      .object({
        callbackId,
        url: httpsUrl.optional(),
        event: Objects.optional(),
        status: Status.optional(),
        httpAuthType: HTTPAuthType.optional(),
        username: z.string().optional(),
        password: z.string().optional(),
      })
      .loose(),
    response: CallbackRegistration,
    summary: 'Change a callback registration.',
  },
  delete: {
    method: 'DELETE',
    path: '/v2/callbacks',
    request: z.object({ callbackId }).loose(),
    response: z.literal(true),
    summary: 'Delete a callback registration (JSON body on DELETE).',
  },
  test: {
    method: 'POST',
    path: '/v2/callbacks/test',
    request: z.object({ callbackId }).loose(),
    response: CallbackTestResult,
    idempotent: false,
    summary: 'Send one test POST to the callback and report the answer.',
  },
  eventList: {
    method: 'POST',
    path: '/v2/callbacks/event-list',
    request: pageRequest(500)
      .extend({ mailboxId: IntId.optional(), event: Objects.optional(), beginDate: DateTime.optional(), endDate: DateTime.optional() })
      .loose(),
    response: pagedObject('events', CallbackEvent),
    list: { kind: 'object', key: 'events' },
    summary: 'Callback events, paged ≤ 500 (default 100).',
  },
  getEventById: {
    method: 'POST',
    path: '/v2/callbacks/get-event-by-id',
    request: z.object({ callbackEventId: IntId }).loose(),
    response: CallbackEventDetail,
    summary: 'One callback event with its payload and delivery attempts.',
  },
  queueList: {
    method: 'POST',
    path: '/v2/callbacks/queue-list',
    request: pageRequest(500).extend({ mailboxId: IntId.optional(), status: CallbackDeliveryStatus.optional() }).loose(),
    response: pagedObject('queueEntries', CallbackQueueEntry),
    list: { kind: 'object', key: 'queueEntries' },
    summary: 'The callback delivery queue, paged ≤ 500 (default 100).',
  },
  getQueueById: {
    method: 'GET',
    path: '/v2/callbacks/get-queue-by-id',
    request: z.object({ callbackId: z.coerce.number().int().positive() }).loose(),
    response: CallbackQueueEntry,
    summary: 'The queue entry of one callback (`?callbackId=`).',
  },
});
