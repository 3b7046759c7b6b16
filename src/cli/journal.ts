/**
 * `gridsync journal migrate --to TARGET`: copies the configured journal (the SQLite file in
 * stateDir, or `journal.url`) into TARGET — a `postgres://` URL, or a SQLite file path to move back
 * — idempotently. `gridsync journal set-service`: records the configured service as the one the
 * journal belongs to (the same service at a new address). Both refuse while a gridsync uses a
 * journal they write: SQLite's single-daemon lock, a live lease in PostgreSQL.
 */
import fs from 'node:fs';
import path from 'node:path';
import {
  assertNotInUse,
  copyJournal,
  describeJournal,
  isPostgresUrl,
  Journal,
  openJournal,
  PgJournal,
  recordedService,
  recordService,
  sqliteJournalPath,
  type JournalStore,
} from '../journal/index.js';
import { redactUrl, type Config } from '../config/index.js';
import { serviceIdentity } from '../daemon/index.js';
import { output, parseCommand, runCommand, usageProblem, UsageError } from './args.js';
import { CONFIG_OPTION, loadConfigWarning, refuseStateDirNotFolder } from './common.js';
import { print, printError } from './print.js';

const USAGE = `usage: gridsync journal migrate (--to postgres://… | --to FILE.sqlite | --to-file URLFILE) [-c FILE]
       gridsync journal set-service [-c FILE]

migrate: copies the configured journal (journal.url, else journal.sqlite in stateDir) into the
target: a PostgreSQL database (its schema is created) or a SQLite file (moving back). Run it with
every gridsync stopped; it refuses while one holds either journal. Running it again is harmless:
rows are matched by their keys. Then point journal.url at the target (or remove it, for SQLite).
A password written in --to is visible to other users (ps): put the URL in a file only you can
read and pass --to-file instead.

set-service: records the service api.baseUrl names (its origin, or embedded) as the one the
journal belongs to. Only for the same service at a new address: the journal's rows are then taken
for that service's parcels and files. With every gridsync stopped.`;

export async function main(argv: string[]): Promise<number> {
  return runCommand(async () => {
    const args = parseCommand(argv, USAGE, { ...CONFIG_OPTION, to: { type: 'string' }, 'to-file': { type: 'string' } }, true);
    if (!args) return 0;
    const [sub, ...rest] = args.positionals;
    if (sub === undefined) throw usageProblem('name a subcommand: migrate or set-service', USAGE);
    if (sub !== 'migrate' && sub !== 'set-service') throw usageProblem(`unknown subcommand ${sub}: migrate or set-service`, USAGE);
    if (rest.length > 0) throw usageProblem(`unexpected argument ${rest.join(' ')}`, USAGE);
    if (sub === 'set-service') {
      if (args.values.to !== undefined || args.values['to-file'] !== undefined) throw usageProblem('set-service takes no target', USAGE);
      return setService(loadConfigWarning(args.values.config).config);
    }
    const toFile = args.values['to-file'];
    const to = toFile ? readTargetFile(toFile) : args.values.to;
    if (!to) throw usageProblem('--to or --to-file is required', USAGE);
    if (!toFile && URL.canParse(to) && new URL(to).password)
      printError(
        'gridsync: warning: the password in --to is visible to every user of this machine (ps, /proc); use --to-file URLFILE instead\n',
      );
    return migrate(loadConfigWarning(args.values.config).config, to);
  });
}

/** The target URL from --to-file, named with the option when unreadable: the bare ENOENT said neither. */
function readTargetFile(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch (err) {
    throw new UsageError(`--to-file ${file}: cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
}

async function migrate(cfg: Config, to: string): Promise<number> {
  const source = { url: cfg.journal.url, stateDir: cfg.stateDir };
  const toSqlite = !isPostgresUrl(to);
  if (toSqlite && !isPostgresUrl(source.url))
    throw new UsageError('the configured journal is SQLite already: --to must be a postgres:// URL');
  if (!toSqlite && to === source.url) throw new UsageError('--to names the configured journal itself');
  refuseStateDirNotFolder(cfg);
  const owner = `gridsync-journal-migrate-${process.pid}`;
  const stores: JournalStore[] = [];
  try {
    const from = await openJournal(source, { owner });
    stores.push(from);
    const target = toSqlite ? Journal.open(path.resolve(to), { owner }) : await PgJournal.open(to, redactUrl(to), { owner });
    stores.push(target);
    await assertNotInUse(from);
    await assertNotInUse(target);
    const copied = await copyJournal(from, target);
    if (!output.quiet) {
      for (const c of copied) print(`${c.table.padEnd(16)} ${String(c.rows).padStart(9)} rows\n`);
      print(
        `copied ${describeJournal(source)} → ${target.location}\n${
          toSqlite
            ? `now remove journal.url and place ${path.resolve(to)} as ${sqliteJournalPath(cfg.stateDir)} on the host that runs gridsync\n`
            : 'now set journal.url (or journal.urlFile) to the target on every instance\n'
        }`,
      );
    }
    return 0;
  } finally {
    for (const s of stores.reverse()) await s.close();
  }
}

/** The operator says the configured service is the one the journal's rows came from; prints what changed. */
async function setService(cfg: Config): Promise<number> {
  const configured = serviceIdentity(cfg.api.baseUrl);
  refuseStateDirNotFolder(cfg);
  const journal = await openJournal(
    { url: cfg.journal.url, stateDir: cfg.stateDir },
    { owner: `gridsync-journal-set-service-${process.pid}` },
  );
  try {
    await assertNotInUse(journal);
    const recorded = await recordedService(journal);
    if (recorded === configured) {
      if (!output.quiet) print(`journal ${journal.location} belongs to service ${configured} already: nothing changed\n`);
      return 0;
    }
    await recordService(journal, configured);
    if (!output.quiet) print(`journal ${journal.location}: service ${recorded ?? '(none recorded)'} → ${configured}\n`);
    return 0;
  } finally {
    await journal.close();
  }
}
