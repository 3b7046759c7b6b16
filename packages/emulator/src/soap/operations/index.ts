/**
 * What each SOAP operation does, over the same store as the REST side (same users, keys,
 * mailboxes, parcels and ids; the parcel lifecycle functions are shared). An operation returns its
 * result value (written by the endpoint in the definition's element order) or a download to stream.
 */
import type { Operation } from './context.js';
import { DIRECTORY_OPERATIONS } from './directory.js';
import { PARCEL_LIST_OPERATIONS } from './parcel-lists.js';
import { PARCEL_OPERATIONS } from './parcels.js';
import { SESSION_OPERATIONS } from './session.js';

export type { OpContext, OpEnv, OpResult, Operation } from './context.js';
export { standardOfContent } from './parcels.js';

export const OPERATIONS: Record<string, Operation> = {
  ...SESSION_OPERATIONS,
  ...PARCEL_LIST_OPERATIONS,
  ...PARCEL_OPERATIONS,
  ...DIRECTORY_OPERATIONS,
};
