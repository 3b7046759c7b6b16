/**
 * Statements that take a list of ids (`IN (?,?,…)`) put their marks in a few fixed counts only. On
 * PostgreSQL every distinct SQL text is a statement prepared on each pooled connection for the
 * connection's life (./postgres-connection.ts): with one mark per id, a pending list one parcel
 * longer each cycle prepared two more statements every cycle (measured: 169 on one connection
 * after 80 cycles). A list is padded with its last id up to the next fixed count (an id twice in
 * `IN` matches once), so such a statement has at most `PADDED_COUNTS.length` texts.
 */

/** Ids per read of many: far below both backends' limits on parameters. */
const IDS_PER_READ = 512;
/** The mark counts a list is padded to; the largest is a read's chunk. */
export const PADDED_COUNTS = [1, 4, 16, 64, 256, IDS_PER_READ] as const;

/** `values` (1 to IDS_PER_READ of them) padded with the last to the next fixed count, and their marks. */
export function padded<T>(values: readonly T[]): { marks: string; values: T[] } {
  const count = PADDED_COUNTS.find((n) => n >= values.length) ?? values.length;
  const out = [...values];
  while (out.length < count) out.push(values[values.length - 1] as T);
  return { marks: out.map(() => '?').join(','), values: out };
}

/** `read` once per chunk of `ids`, with the chunk's marks and values (padded); the rows of every chunk. */
export async function inChunks<I, T>(ids: readonly I[], read: (marks: string, chunk: I[]) => Promise<T[]>): Promise<T[]> {
  const rows: T[] = [];
  for (let i = 0; i < ids.length; i += IDS_PER_READ) {
    const { marks, values } = padded(ids.slice(i, i + IDS_PER_READ));
    rows.push(...(await read(marks, values)));
  }
  return rows;
}
