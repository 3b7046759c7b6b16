/** The scalar shapes of the wire: ids, datetimes, the password rule, an X12 delimiter. */
import { z } from 'zod';

/** 64-bit ids (parcels, interchanges): exact only up to 2^53 in JSON numbers, so refuse beyond. */
export const LongId = z
  .number()
  .int()
  .refine((n) => Number.isSafeInteger(n), { message: 'id exceeds Number.MAX_SAFE_INTEGER' });
export const IntId = z.number().int();

/** ISO 8601 datetime; the service emits UTC with `Z`, we accept offsets and fractions too. */
export const DateTime = z.string().refine((s) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/.test(s), {
  message: 'expected an ISO 8601 datetime',
});

export const Password = z.string().refine((p) => /[a-z]/.test(p) && /[A-Z]/.test(p) && /\d/.test(p) && /[^A-Za-z0-9]/.test(p), {
  message: 'must contain a lowercase letter, an uppercase letter, a digit and a character that is not a letter or digit',
});

/** One X12 delimiter character. */
export const Delimiter = z.string().length(1, 'must be exactly one character');
