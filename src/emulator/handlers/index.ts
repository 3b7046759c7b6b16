/**
 * The registry of emulator handlers: catalog endpoint name → handler.
 *
 * Pattern for a new group (one module per group, src/emulator/handlers/<group>.ts):
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
 * objects answer 404. Routing, validation, auth, faults and the request log are the server's job;
 * an entry without a handler answers 400 "not implemented by the emulator: <name>".
 */
import type { Handler } from '../context.js';
import { authHandlers } from './auth.js';
import { callbackHandlers } from './callbacks.js';
import { directoryHandlers } from './directory.js';
import { parcelHandlers } from './parcels.js';

export const HANDLERS: Record<string, Handler> = { ...authHandlers, ...parcelHandlers, ...directoryHandlers, ...callbackHandlers };
