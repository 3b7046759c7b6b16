/** The callback (webhook) records: registrations, events, the delivery queue, a test (docs/wire.md#callbacks). */
import { z } from 'zod';
import { DateTime, IntId } from './scalars.js';
import { CallbackDeliveryStatus, HTTPAuthType, Objects, Status, lenient } from './enums.js';

export const CallbackRegistration = z
  .object({
    callbackId: IntId,
    url: z.string(),
    event: lenient(Objects),
    mailboxId: IntId.nullish(),
    networkId: IntId.nullish(),
    httpAuthType: lenient(HTTPAuthType).optional(),
    status: lenient(Status),
  })
  .loose();

export const CallbackEvent = z
  .object({
    callbackEventId: IntId,
    callbackId: IntId,
    event: lenient(Objects),
    mailboxId: IntId.nullish(),
    objectId: z.number().int(),
    status: z.string().nullish(),
    created: DateTime.optional(),
    delivered: DateTime.nullish(),
    httpStatus: z.number().int().nullish(),
  })
  .loose();

export const CallbackEventDetail = CallbackEvent.extend({
  payload: z.string().nullish(),
  attempts: z.number().int().optional(),
  lastAttempt: DateTime.nullish(),
});

export const CallbackQueueEntry = z
  .object({
    callbackId: IntId,
    url: z.string(),
    event: lenient(Objects),
    mailboxId: IntId.nullish(),
    queuedAt: DateTime.nullish(),
    lastAttempt: DateTime.nullish(),
    attempts: z.number().int(),
    status: lenient(CallbackDeliveryStatus),
    lastHttpStatus: z.number().int().nullish(),
  })
  .loose();

export const CallbackTestResult = z
  .object({
    callbackId: IntId,
    url: z.string(),
    httpStatus: z.number().int(),
    responseBody: z.string().nullish(),
    testedAt: DateTime,
  })
  .loose();
