/**
 * Copying a whole journal from one backend to the other (`gridsync journal migrate`): SQLite →
 * PostgreSQL when an installation starts sharing its journal, and back. Idempotent: every row is
 * upserted by its key (the source wins), events are added once, so a second run — or a run after
 * an interrupted one — leaves the same target. Leases are not copied: they are the running
 * instances' state. Both journals are at the same schema version (each is migrated on open).
 *
 * Only while nothing else writes either journal: the caller holds SQLite's single-daemon lock, and
 * a PostgreSQL journal with a live lease is refused (`assertNotInUse`).
 */
import { GridsyncError } from '../errors/index.js';
import type { JournalStore } from './store.js';

/** Each table with its key, in the order they are copied. */
const TABLES: readonly { readonly name: string; readonly key: readonly string[]; readonly keepExisting?: true }[] = [
  { name: 'inbound_parcels', key: ['mailbox_id', 'parcel_id'] },
  { name: 'outbound_files', key: ['id'] },
  { name: 'events', key: ['id'], keepExisting: true },
  { name: 'meta', key: ['key'] },
];

/** Rows per read and per multi-row insert (well under both backends' bound-parameter limits). */
const PAGE = 200;

/** A journal that a running gridsync still uses: copying now would miss its next writes. */
export class JournalInUseError extends GridsyncError {
  readonly code = 'JOURNAL_IN_USE';
  constructor(
    readonly location: string,
    readonly owners: readonly string[],
  ) {
    super(`journal ${location} is in use by ${owners.join(', ')} (live leases): stop every gridsync using it first`);
  }
}

export class JournalSchemaMismatchError extends GridsyncError {
  readonly code = 'JOURNAL_SCHEMA_MISMATCH';
  constructor(from: number, to: number) {
    super(`the journals are at different schema versions (${from} and ${to}): run the same gridsync version on both first`);
  }
}

/** Refuses a journal some instance holds a live lease on (SQLite's lock is taken when it is opened). */
export async function assertNotInUse(journal: JournalStore): Promise<void> {
  const owners = [...new Set((await journal.leases.list()).filter((l) => l.live).map((l) => l.owner))];
  if (owners.length > 0) throw new JournalInUseError(journal.location, owners);
}

export interface CopiedTable {
  readonly table: string;
  readonly rows: number;
}

export async function copyJournal(from: JournalStore, to: JournalStore): Promise<CopiedTable[]> {
  const [vFrom, vTo] = [await from.schemaVersion(), await to.schemaVersion()];
  if (vFrom !== vTo) throw new JournalSchemaMismatchError(vFrom, vTo);
  const copied: CopiedTable[] = [];
  for (const t of TABLES) {
    let rows = 0;
    const order = t.key.join(', ');
    for (let offset = 0; ; offset += PAGE) {
      const page = await from.all<Record<string, unknown>>(`SELECT * FROM ${t.name} ORDER BY ${order} LIMIT ? OFFSET ?`, PAGE, offset);
      if (page.length === 0) break;
      await to.maintain(...upsert(t.name, t.key, page, t.keepExisting === true));
      rows += page.length;
    }
    copied.push({ table: t.name, rows });
  }
  // PostgreSQL's identity columns do not follow explicit ids: the next claim must not reuse one.
  if (to.backend === 'postgres') {
    for (const table of ['outbound_files', 'events'])
      await to.maintain(`SELECT setval(pg_get_serial_sequence('${table}', 'id'), coalesce((SELECT max(id) FROM ${table}), 0) + 1, false)`);
  }
  return copied;
}

/** One multi-row INSERT … ON CONFLICT for a page of rows, as SQL and parameters. */
function upsert(
  table: string,
  key: readonly string[],
  rows: readonly Record<string, unknown>[],
  keepExisting: boolean,
): [string, ...unknown[]] {
  const cols = Object.keys(rows[0] as Record<string, unknown>);
  const values = rows.map(() => `(${cols.map(() => '?').join(', ')})`).join(', ');
  const update = cols.filter((c) => !key.includes(c)).map((c) => `${c} = excluded.${c}`);
  const onConflict = keepExisting || update.length === 0 ? 'DO NOTHING' : `DO UPDATE SET ${update.join(', ')}`;
  const sql = `INSERT INTO ${table} (${cols.join(', ')}) VALUES ${values} ON CONFLICT (${key.join(', ')}) ${onConflict}`;
  return [sql, ...rows.flatMap((r) => cols.map((c) => r[c]))];
}
