/**
 * The shared journal's schema damaged while an instance runs: a table or column dropped or
 * renamed by hand. A start refuses such a journal (`./migration-plan.ts`); a running instance met
 * it only as statements failing, read as the server being away (`JOURNAL_UNAVAILABLE`), and went
 * on — its inbound steps written while every outbound one failed — until its next start.
 *
 * pg's SQLSTATEs for a relation or a column the statement names and the database lacks (42P01,
 * 42703) start the check a start makes; should it find objects missing, the damage is final for
 * this process: the statement's caller gets the damage instead of its error (`verdict`), the
 * journal refuses every further commit and tells its listeners once. Those codes alone decide
 * nothing: one that names no object of ours finds nothing missing.
 */
import { JournalSchemaDamagedError } from './schema-damaged-error.js';

const MISSING_OBJECT = new Set(['42P01', '42703']);

export class SchemaWatch {
  private damage: JournalSchemaDamagedError | undefined;
  private checking: Promise<void> | undefined;
  private readonly listeners: ((err: JournalSchemaDamagedError) => void)[] = [];

  constructor(
    private readonly location: string,
    /** What the schema lacks that its versions created (the start's check). */
    private readonly missing: () => Promise<readonly string[]>,
  ) {}

  /** The damage found, once found. */
  get found(): JournalSchemaDamagedError | undefined {
    return this.damage;
  }

  /** Every error a statement of the journal met passes here. */
  saw(err: unknown): void {
    const code = (err as { code?: unknown } | null)?.code;
    if (this.damage || this.checking || typeof code !== 'string' || !MISSING_OBJECT.has(code)) return;
    // A check that fails (the server gone meanwhile) decides nothing: the next such error asks again.
    this.checking = this.missing().then(
      (missing) => {
        this.checking = undefined;
        if (missing.length === 0 || this.damage) return;
        this.damage = new JournalSchemaDamagedError(this.location, missing);
        for (const l of this.listeners) l(this.damage);
      },
      () => void (this.checking = undefined),
    );
  }

  /**
   * What a failed statement's caller is given: the damage, once the check its error started (or
   * one under way) found it; else the error itself. A caller that decides on the code (`once`'s
   * exit, a cycle's failure) so sees `JOURNAL_SCHEMA_DAMAGED`, not the statement's failure.
   */
  async verdict(err: Error): Promise<Error> {
    await this.checking;
    return this.damage ?? err;
  }

  onDamaged(listener: (err: JournalSchemaDamagedError) => void): void {
    this.listeners.push(listener);
  }
}
