/** Statements that take a list of ids (`IN (?,?,…)`) read them in chunks. */

/** Ids per read of many: far below both backends' limits on parameters. */
const IDS_PER_READ = 500;

/** `read` once per chunk of `ids`, with the chunk's placeholders; the rows of every chunk. */
export async function inChunks<I, T>(ids: readonly I[], read: (marks: string, chunk: I[]) => Promise<T[]>): Promise<T[]> {
  const rows: T[] = [];
  for (let i = 0; i < ids.length; i += IDS_PER_READ) {
    const chunk = ids.slice(i, i + IDS_PER_READ);
    rows.push(...(await read(chunk.map(() => '?').join(','), chunk)));
  }
  return rows;
}
