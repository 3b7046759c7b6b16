/** The paging fields of a list request and the shape of a paged list answer (docs/wire.md#limits). */
import { z } from 'zod';

/** Paging fields with the upper bound of one list (docs/wire.md#limits). */
export function pageRequest(maxRecordsPerPage: number) {
  return z.object({
    pageNo: z.number().int().min(1).optional(),
    recordsPerPage: z.number().int().min(1).max(maxRecordsPerPage).optional(),
  });
}

/** The object list shape: `{ totalRecords, pageNo, recordsPerPage, <key>: T[] }`. */
export function pagedObject<K extends string, T extends z.ZodType>(key: K, item: T) {
  return z
    .object({
      totalRecords: z.number().int(),
      pageNo: z.number().int(),
      recordsPerPage: z.number().int(),
      [key]: z.array(item),
    } as { totalRecords: z.ZodNumber; pageNo: z.ZodNumber; recordsPerPage: z.ZodNumber } & { [P in K]: z.ZodArray<T> })
    .loose();
}
