/** Status Lists (1): the status vocabularies of parcels and interchanges. docs/wire.md#records. */
import { z } from 'zod';
import { StatusListItem } from '../wire/index.js';
import { defineGroup } from './endpoint.js';

export const statusLists = defineGroup('Status Lists', 'statusLists', {
  get: {
    method: 'GET',
    path: '/v2/status-lists',
    request: z.object({}).loose(),
    response: z.object({ parcelStatuses: z.array(StatusListItem), interchangeStatuses: z.array(StatusListItem) }).loose(),
    summary: 'Parcel and interchange status codes with descriptions.',
  },
});
