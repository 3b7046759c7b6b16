// Counts rows in a running daemon's SQLite journal from outside it (read-only, a fresh handle each
// time), for tests that wait until a step has been journalled.
import fs from 'node:fs';
import path from 'node:path';
import { Journal } from '../../src/journal/index.js';

/** `sql` selects one row with a column `n`; 0 while the journal is not there or not yet migrated. */
export function countInJournal(stateDir: string, sql: string): number {
  const file = path.join(stateDir, 'journal.sqlite');
  if (!fs.existsSync(file)) return 0;
  let journal: Journal | undefined;
  try {
    journal = Journal.open(file, { readonly: true });
    return (journal.db.prepare(sql).get() as { n: number }).n;
  } catch {
    return 0;
  } finally {
    void journal?.close();
  }
}
