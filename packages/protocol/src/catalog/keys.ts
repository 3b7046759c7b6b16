/** Keys (4): API keys of users. docs/wire.md#catalog. The full key is shown once, at creation. */
import { z } from 'zod';
import { IntId, KeyRecord, KeyVisibility } from '../wire/index.js';
import { defineGroup } from './endpoint.js';

export const keys = defineGroup('Keys', 'keys', {
  create: {
    method: 'POST',
    path: '/v2/keys/create',
    request: z.object({ userId: IntId, visibility: KeyVisibility }).loose(),
    response: KeyRecord,
    idempotent: false,
    summary: 'Create an API key; the full key is returned only in this response.',
  },
  getKey: {
    method: 'POST',
    path: '/v2/keys/get-key',
    request: z.object({ userId: IntId }).loose(),
    response: KeyRecord,
    summary: 'The key record of a user (key masked).',
  },
  list: {
    method: 'POST',
    path: '/v2/keys/list',
    request: z.object({ userId: IntId, visibility: KeyVisibility.optional() }).loose(),
    response: z.array(KeyRecord),
    summary: 'Key records of a user (keys masked).',
  },
  delete: {
    method: 'DELETE',
    path: '/v2/keys',
    request: z.object({ keyId: IntId }).loose(),
    response: z.literal(true),
    summary: 'Revoke a key (JSON body on DELETE).',
  },
});
