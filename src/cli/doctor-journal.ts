/**
 * `gridsync doctor` on a PostgreSQL journal: the database is reachable, its schema is the one this
 * build writes, the host's clock agrees with the database's, and commits are replicated
 * synchronously (as far as the database lets us see). Leases never read a host's clock, but the
 * journal's timestamps and an operator comparing logs do; and an asynchronous failover can lose
 * a committed "upload started" row, after which a file may be sent twice.
 */
import { journalServiceVerdict, serviceChangedAdvice, serviceHeldAdvice } from '../daemon/index.js';
import { JournalSchemaDamagedError, openJournal, PgJournal, PG_SCHEMA_VERSION, type JournalStore } from '../journal/index.js';
import type { CheckResult } from './doctor.js';

/** The service the config names (`serviceIdentity`) and the config's file, for the advice. */
export interface ConfiguredService {
  readonly service: string;
  readonly configFile: string;
}

/** The name of the check of the service the journal belongs to, on both backends. */
export const SERVICE_CHECK_NAME = "journal's service";

/**
 * What run and once decide at start about the service the journal belongs to (journal-service.ts),
 * recording nothing. `journal` undefined: none exists yet.
 */
export async function serviceVerdict(journal: JournalStore | undefined, configured: ConfiguredService): Promise<CheckResult> {
  const { service } = configured;
  if (!journal) return { level: 'note', detail: `no journal yet: the first run records ${service}` };
  const found = await journalServiceVerdict(journal, service);
  switch (found.verdict) {
    case 'same':
      return { level: 'ok', detail: service };
    case 'unrecorded':
      return { level: 'note', detail: `none recorded yet: the next run records ${service}` };
    case 'empty':
      return { level: 'note', detail: `${found.recorded}, but the journal holds no rows: the next run records ${service}` };
    case 'other':
      return { level: 'fail', detail: serviceChangedAdvice(journal.location, found.recorded, service, configured.configFile) };
    case 'held':
      return { level: 'fail', detail: serviceHeldAdvice(journal.location, found.recorded, found.live, service) };
  }
}

/** Skew beyond this is worth a note: row timestamps and logs of different hosts stop lining up. */
export const CLOCK_SKEW_NOTE_MS = 1_000;

/** `missing`: the tables and columns the schema's versions created and the database lacks (a start refuses then). */
export function schemaVerdict(
  version: number,
  known: number = PG_SCHEMA_VERSION,
  missing: readonly string[] = [],
  location = '',
): CheckResult {
  if (missing.length > 0) return { level: 'fail', detail: new JournalSchemaDamagedError(location, missing).message };
  if (version === known) return { level: 'ok', detail: `version ${version}` };
  if (version === 0) return { level: 'note', detail: 'empty: the first run (or journal migrate) creates the schema' };
  if (version < known) return { level: 'note', detail: `version ${version}; the next run migrates it to ${known}` };
  return { level: 'fail', detail: `version ${version} is newer than this gridsync knows (${known}): upgrade gridsync on this host` };
}

/** The database's clock minus this host's, from one round trip (the host's time taken at its middle). */
export function skewVerdict(skewMs: number, roundTripMs: number): CheckResult {
  // Signed after rounding: -0.4 ms rounds to -0, which printed as "0" beside "+0" for +0.4.
  const rounded = Math.round(skewMs) || 0;
  const shown = `${rounded >= 0 ? '+' : ''}${rounded} ms (round trip ${Math.round(roundTripMs)} ms)`;
  if (Math.abs(skewMs) - roundTripMs / 2 > CLOCK_SKEW_NOTE_MS)
    return {
      level: 'note',
      detail: `database clock ${shown} from this host's: leases use the database's clock only, but journal timestamps and logs of the hosts will not line up — run NTP/chrony on every host and the database`,
    };
  return { level: 'ok', detail: `database clock ${shown}` };
}

export interface ReplicationView {
  readonly inRecovery: boolean;
  readonly synchronousStandbyNames: string;
  readonly synchronousCommit: string;
  /** pg_stat_replication as this role sees it (without pg_monitor the rows may be missing). */
  readonly standbys: readonly { name: string; syncState: string | null }[];
}

export function replicationVerdict(v: ReplicationView): CheckResult {
  if (v.inRecovery) return { level: 'fail', detail: 'connected to a standby (read-only): journal.url must name the primary' };
  if (v.synchronousStandbyNames.trim() === '')
    return {
      level: 'note',
      detail:
        'no synchronous standby (synchronous_standby_names is empty): after a failover to an asynchronous standby a committed "upload started" row can be lost and that file sent twice',
    };
  if (['off', 'local'].includes(v.synchronousCommit))
    return { level: 'note', detail: `synchronous_commit is ${v.synchronousCommit}: commits do not wait for the standby` };
  const sync = v.standbys.filter((s) => s.syncState === 'sync' || s.syncState === 'quorum');
  if (sync.length > 0) return { level: 'ok', detail: `synchronous standby ${sync.map((s) => `${s.name} (${s.syncState})`).join(', ')}` };
  if (v.standbys.length === 0)
    return {
      level: 'fail',
      detail: `synchronous_standby_names is '${v.synchronousStandbyNames}' but no standby is connected (or this role may not see pg_stat_replication: grant pg_monitor): commits wait until one is`,
    };
  return {
    level: 'fail',
    detail: `synchronous_standby_names is '${v.synchronousStandbyNames}' but no connected standby is synchronous (${v.standbys.map((s) => `${s.name}: ${s.syncState ?? '?'}`).join(', ')}): commits wait`,
  };
}

interface JournalCheck {
  readonly name: string;
  run(): Promise<CheckResult>;
}

/** The checks, sharing one read-only connection opened by the first. */
export function postgresJournalChecks(
  url: string,
  location: string,
  configured: ConfiguredService,
): { checks: JournalCheck[]; close(): Promise<void> } {
  let opened: Promise<JournalStore> | undefined;
  const journal = (): Promise<JournalStore> => (opened ??= openJournal({ url, stateDir: '' }, { readonly: true }));
  const checks: JournalCheck[] = [
    {
      name: `journal ${location} reachable`,
      run: async () => {
        const row = await (await journal()).get<{ v: string }>('SELECT version() AS v');
        return { level: 'ok', detail: String(row?.v ?? '').split(' on ')[0] ?? '' };
      },
    },
    {
      name: 'journal schema',
      run: async () => {
        const j = await journal();
        const missing = j instanceof PgJournal ? await j.missingObjects() : [];
        return schemaVerdict(await j.schemaVersion(), PG_SCHEMA_VERSION, missing, location);
      },
    },
    {
      name: SERVICE_CHECK_NAME,
      run: async () => {
        const j = await journal();
        // An empty database has no meta table yet.
        return serviceVerdict((await j.schemaVersion()) === 0 ? undefined : j, configured);
      },
    },
    {
      name: 'clock skew between this host and the database',
      run: async () => {
        const j = await journal();
        const t0 = Date.now();
        const row = await j.get<{ ms: string | number }>('SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS ms');
        const t1 = Date.now();
        return skewVerdict(Number(row?.ms) - (t0 + t1) / 2, t1 - t0);
      },
    },
    {
      name: 'journal replication',
      run: async () => {
        const j = await journal();
        const get = async (sql: string): Promise<string> => String((await j.get<{ v: unknown }>(sql))?.v ?? '');
        const standbys = await j.all<{ name: string; sync_state: string | null }>(
          'SELECT application_name AS name, sync_state FROM pg_stat_replication',
        );
        return replicationVerdict({
          inRecovery: (await get('SELECT pg_is_in_recovery() AS v')) === 'true',
          synchronousStandbyNames: await get("SELECT current_setting('synchronous_standby_names') AS v"),
          synchronousCommit: await get("SELECT current_setting('synchronous_commit') AS v"),
          standbys: standbys.map((s) => ({ name: s.name, syncState: s.sync_state })),
        });
      },
    },
  ];
  return {
    checks,
    close: async () => {
      if (opened) await (await opened.catch(() => undefined))?.close();
    },
  };
}
