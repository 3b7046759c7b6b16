/**
 * What a start does with the PostgreSQL schema it finds: the versions to run, those to record again
 * (their objects there, their record lost), and what is missing (refused, never recreated).
 */
import { describe, expect, it } from 'vitest';
import { planMigrations } from '../../../src/journal/migration-plan.js';

const MIGRATIONS = [
  { version: 1, creates: ['parcels', 'lease'] },
  { version: 2, creates: ['parcels.confirmed'] },
  { version: 3, creates: ['files.started'] },
];
const ALL = new Set(['parcels', 'lease', 'parcels.mailbox', 'parcels.confirmed', 'files', 'files.started']);
const without = (...gone: string[]): Set<string> => new Set([...ALL].filter((o) => !gone.includes(o)));

describe('planMigrations', () => {
  it('runs every version on an empty database, none on an up-to-date one', () => {
    expect(planMigrations(MIGRATIONS, [], new Set())).toEqual({ apply: [1, 2, 3], record: [], missing: [] });
    expect(planMigrations(MIGRATIONS, [1, 2, 3], ALL)).toEqual({ apply: [], record: [], missing: [] });
    expect(planMigrations(MIGRATIONS, [1], without('parcels.confirmed', 'files.started'))).toEqual({
      apply: [2, 3],
      record: [],
      missing: [],
    });
  });

  it('records again the versions whose objects are all there when their record is gone', () => {
    expect(planMigrations(MIGRATIONS, [], ALL)).toEqual({ apply: [], record: [1, 2, 3], missing: [] });
    expect(planMigrations(MIGRATIONS, [3], ALL)).toEqual({ apply: [], record: [1, 2], missing: [] });
    expect(planMigrations(MIGRATIONS, [], without('files.started'))).toEqual({ apply: [3], record: [1, 2], missing: [] });
  });

  it('names what a recorded version created and the database lacks, a table without its columns', () => {
    expect(planMigrations(MIGRATIONS, [1, 2, 3], without('lease')).missing).toEqual(['lease']);
    expect(planMigrations(MIGRATIONS, [1, 2, 3], without('parcels', 'parcels.mailbox', 'parcels.confirmed')).missing).toEqual(['parcels']);
    expect(planMigrations(MIGRATIONS, [1, 2, 3], without('files.started')).missing).toEqual(['files.started']);
  });

  it('refuses a version not recorded but partly there: changed by hand, not half-run', () => {
    expect(planMigrations(MIGRATIONS, [], new Set(['lease'])).missing).toEqual(['parcels']);
    expect(planMigrations(MIGRATIONS, [], without('lease')).missing).toEqual(['lease']);
  });
});
