/** The response envelope around every answer and the published error codes (docs/wire.md#envelope, #errors). */
import { z } from 'zod';

/** Every response. `errorCode`/`message` may be "", null or absent on success (docs/wire.md#envelope). */
export const Envelope = z
  .object({
    success: z.boolean(),
    data: z.unknown().optional(),
    errorCode: z.string().nullish(),
    message: z.string().nullish(),
  })
  .loose();
export type Envelope = z.infer<typeof Envelope>;

export const ERROR_CODES = [
  'InvalidSession',
  'InvalidAPIKey',
  'InvalidParameter',
  'AccessDenied',
  'ObjectNotFound',
  'DuplicateObject',
  'RateLimitExceeded',
  'InternalError',
] as const;
/** The published codes, typed; a code the service invents later is preserved as a string. */
export type ErrorCode = (typeof ERROR_CODES)[number] | (string & {});

/** The HTTP status each published errorCode travels with (docs/wire.md#errors). */
export const ERROR_STATUS: Record<(typeof ERROR_CODES)[number], number> = {
  InvalidSession: 401,
  InvalidAPIKey: 401,
  InvalidParameter: 400,
  AccessDenied: 403,
  ObjectNotFound: 404,
  DuplicateObject: 400,
  RateLimitExceeded: 429,
  InternalError: 500,
};
