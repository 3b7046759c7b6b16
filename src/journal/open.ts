/**
 * Opening the configured journal: PostgreSQL when a `postgres://` URL is given (`journal.url`,
 * `journal.urlFile`, `GRIDSYNC_JOURNAL_URL`), else the embedded SQLite journal in stateDir.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { redactUrl } from '../config/redact.js';
import { Journal } from './db.js';
import { defaultInstanceName } from './lease.js';
import { PgJournal } from './postgres.js';
import type { JournalStore } from './store.js';

export interface JournalLocation {
  /** A `postgres://` or `postgresql://` URL; undefined: SQLite. */
  readonly url?: string | undefined;
  /** gridsync's state directory: the SQLite journal lives there as journal.sqlite. */
  readonly stateDir: string;
}

export interface OpenOptions {
  /** This instance's name; default host name + pid. */
  readonly owner?: string | undefined;
  /** SQLite: take the single-daemon lock (default true). */
  readonly lock?: boolean;
  /** Only read: no migrations, no lock. */
  readonly readonly?: boolean;
  readonly now?: () => number;
}

export const isPostgresUrl = (url: string | undefined): url is string => url !== undefined && /^postgres(ql)?:\/\//i.test(url);

export const sqliteJournalPath = (stateDir: string): string => path.join(stateDir, 'journal.sqlite');

/** The journal's place, safe to show: a URL's password masked. */
export function describeJournal(where: JournalLocation): string {
  return isPostgresUrl(where.url) ? redactUrl(where.url) : sqliteJournalPath(where.stateDir);
}

export async function openJournal(where: JournalLocation, options: OpenOptions = {}): Promise<JournalStore> {
  const owner = options.owner ?? defaultInstanceName(os.hostname(), process.pid);
  if (isPostgresUrl(where.url)) {
    return PgJournal.open(where.url, describeJournal(where), {
      owner,
      migrate: options.readonly !== true,
      ...(options.now ? { now: options.now } : {}),
    });
  }
  return Journal.open(sqliteJournalPath(where.stateDir), {
    owner,
    ...(options.lock === undefined ? {} : { lock: options.lock }),
    ...(options.readonly === undefined ? {} : { readonly: options.readonly }),
    ...(options.now ? { now: options.now } : {}),
  });
}

/**
 * The journal for a command that only reads it, or undefined where gridsync has not run yet: no
 * SQLite file in stateDir, or a PostgreSQL database without gridsync's tables. A reader must not
 * create them (a first run does), and reading a table that is not there failed.
 */
export async function openExistingJournal(where: JournalLocation): Promise<JournalStore | undefined> {
  if (!isPostgresUrl(where.url))
    return fs.existsSync(sqliteJournalPath(where.stateDir)) ? openJournal(where, { readonly: true }) : undefined;
  const journal = await openJournal(where, { readonly: true });
  if ((await journal.schemaVersion()) > 0) return journal;
  await journal.close();
  return undefined;
}
