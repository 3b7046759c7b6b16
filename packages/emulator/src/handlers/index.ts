/**
 * The registry of emulator handlers: catalog endpoint name → handler.
 *
 * Pattern for a new group (one module per group, handlers/<group>.ts):
 *   export const fooHandlers: Record<string, Handler> = {
 *     'foo.get': (ctx) => ({ data: ... }),   // key = the catalog entry's `name`
 *   };
 * then spread it into HANDLERS below. A handler gets a HandlerContext (context.ts): `world` (store,
 * settings, clock `now`, `later` for scheduled work), `endpoint` (the catalog entry), `input`
 * (already validated with the entry's request schema), `caller` (authenticated user; the server
 * has already enforced the entry's `minLevel`), `req` and the request's fault `plan`. It returns
 * `{ data, message? }` for the envelope or `{ stream }` to write the reply itself, and throws the
 * EmulatorError helpers (invalidParameter, objectNotFound, accessDenied, duplicateObject) for the
 * error envelope. Tenancy: use resolveMailbox / canSeeMailbox / canSeeNetwork so another tenant's
 * objects answer 404 (helpers in handlers/common.ts). Routing, validation, auth, faults and the
 * request log are the server's job. Every catalog entry has a handler (a test checks it).
 */
import type { Handler } from '../context.js';
import { authHandlers } from './auth.js';
import { callbackHandlers } from './callbacks.js';
import { directoryHandlers } from './directory.js';
import { parcelHandlers } from './parcels.js';
import { networkHandlers } from './networks.js';
import { mailboxHandlers } from './mailboxes.js';
import { idHandlers } from './ids.js';
import { partnerHandlers } from './partners.js';
import { userHandlers } from './users.js';
import { keyHandlers } from './keys.js';
import { commHandlers, certificateHandlers } from './comms.js';
import { carbonCopyHandlers } from './carbon-copies.js';
import { portalHandlers } from './portals.js';
import { reportHandlers } from './reports.js';
import { InternalError } from '@gridsync/protocol/errors';

const GROUPS: readonly Record<string, Handler>[] = [
  authHandlers,
  parcelHandlers,
  directoryHandlers,
  callbackHandlers,
  networkHandlers,
  mailboxHandlers,
  idHandlers,
  partnerHandlers,
  userHandlers,
  keyHandlers,
  commHandlers,
  certificateHandlers,
  carbonCopyHandlers,
  portalHandlers,
  reportHandlers,
];

/** Every catalog endpoint's handler; a name defined by two groups is a bug caught at start-up. */
export const HANDLERS: Record<string, Handler> = {};
for (const group of GROUPS) {
  for (const [name, handler] of Object.entries(group)) {
    if (HANDLERS[name]) throw new InternalError(`emulator: two handlers for ${name}`);
    HANDLERS[name] = handler;
  }
}
