/**
 * The service a journal belongs to. Its rows are keyed by mailbox and parcel id alone, and two
 * services number their parcels alike (two emulators both start at 100001): rows of one service
 * read against another would place one parcel's content and confirm another's. So the journal
 * records which service it serves, as a meta row (both backends, no schema change); the daemon
 * compares it with the configured service at start (`src/daemon/journal-service.ts`).
 */
import { GridsyncError } from '../errors/index.js';
import type { JournalStore } from './store.js';

const SERVICE_KEY = 'service';

/** The service recorded in the journal; undefined before any start recorded one. */
export function recordedService(journal: Pick<JournalStore, 'getMeta'>): Promise<string | undefined> {
  return journal.getMeta(SERVICE_KEY);
}

export function recordService(journal: Pick<JournalStore, 'setMeta'>, service: string): Promise<void> {
  return journal.setMeta(SERVICE_KEY, service);
}

/**
 * Whether the journal holds any inbound or outbound row. Finished rows count: a confirmed parcel's
 * row is read against the service too (a parcel listed again after its confirm is taken for a reset).
 */
export async function holdsRows(journal: Pick<JournalStore, 'get'>): Promise<boolean> {
  for (const table of ['inbound_parcels', 'outbound_files']) if (await journal.get(`SELECT 1 AS one FROM ${table} LIMIT 1`)) return true;
  return false;
}

/**
 * A shared journal now records another service than this instance serves: an instance configured
 * for that service took it over while the journal held no rows. This one hands back its leases and
 * takes none (none of its writes can land), and each of its cycles fails with this, until it is
 * restarted with the journal's service or given a journal of its own.
 */
export class JournalServiceChangedError extends GridsyncError {
  readonly code = 'JOURNAL_SERVICE_CHANGED';
  constructor(
    readonly recorded: string,
    readonly configured: string,
  ) {
    super(
      `the journal now serves service ${recorded} (recorded by an instance started for it), but api.baseUrl names ${configured}: ` +
        "this instance holds no mailbox; give it the journal's service, or a journal of its own, and restart it",
    );
  }
}
