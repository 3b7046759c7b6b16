/**
 * Which PostgreSQL migrations to run and which merely to record, judged by the objects the
 * database holds — not only by `schema_migrations`, which an operator, a restore or a DBA may have
 * emptied while the tables stayed (every start then failed on `relation … already exists`). A
 * migration runs in one transaction with its record, so its objects are either all there or none:
 * anything in between was changed by hand and is refused rather than guessed at.
 */

/** A migration as this plan sees it: its version and the objects it creates (`table`, or `table.column`). */
export interface PlannedMigration {
  readonly version: number;
  readonly creates: readonly string[];
}

export interface MigrationPlan {
  /** Versions to run (none of their objects exist), in order. */
  readonly apply: readonly number[];
  /** Versions whose objects all exist but whose record is gone: recorded again, not run. */
  readonly record: readonly number[];
  /** Objects a recorded version (or the rest of a partly present one) needs and the database lacks. */
  readonly missing: readonly string[];
}

export function planMigrations(
  migrations: readonly PlannedMigration[],
  recorded: readonly number[],
  present: ReadonlySet<string>,
): MigrationPlan {
  const top = Math.max(0, ...recorded);
  const apply: number[] = [];
  const record: number[] = [];
  const missing: string[] = [];
  for (const m of migrations) {
    const lacking = m.creates.filter((o) => !present.has(o));
    // Below the highest recorded version every object must be there: the version ran.
    if (m.version <= top || (lacking.length > 0 && lacking.length < m.creates.length)) missing.push(...lacking);
    if (lacking.length === 0 && !recorded.includes(m.version)) record.push(m.version);
    if (m.version > top && lacking.length === m.creates.length && lacking.length > 0) apply.push(m.version);
  }
  // A missing table's columns are missing with it: the table is what to restore.
  const table = (o: string): string => o.split('.')[0] as string;
  return { apply, record, missing: missing.filter((o) => table(o) === o || !missing.includes(table(o))) };
}
