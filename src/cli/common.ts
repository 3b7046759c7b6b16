/** What the daemon commands share: config loading with exit code 2 on errors, the logger, an operator's journal. */
import fs from 'node:fs';
import { loadConfig, type Config, type LoadedConfig } from '../config/index.js';
import { createLogger, StartupError, wantsPretty } from '../daemon/index.js';
import { openJournal, type JournalStore } from '../journal/index.js';
import type { Logger } from '../log.js';
import { output, type LogLevel } from './args.js';
import { printError } from './print.js';

const LEVEL_ORDER = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

export const CONFIG_OPTION = { config: { type: 'string', short: 'c' } } as const;

/** The config, or a ConfigError that reaches stderr with its code (exit 2 from the error table). */
export function loadConfigOrThrow(file: string | undefined): LoadedConfig {
  return loadConfig(file);
}

/**
 * The config for a command that keeps no log of its own (`status`, `requeue`, `redeliver`,
 * `callbacks`, `journal`, `call -c`, `once --dry-run`), its warnings on stderr as `run` logs them
 * (`loggerFor`) and `doctor` lists them: a misspelt GRIDSYNC_JOURNAL_URL had `status` read the
 * local journal and `redeliver` note its request there, without a word.
 */
export function loadConfigWarning(file: string | undefined): LoadedConfig {
  const loaded = loadConfig(file);
  for (const w of loaded.warnings) printError(`gridsync: warning: ${w}\n`);
  return loaded;
}

/**
 * The configured journal for an operator's command (`requeue`, `redeliver`), meant to work while
 * the daemon runs: SQLite without the single-daemon lock; on PostgreSQL it holds no lease, so it
 * writes through the journal's operator steps only (`CommitOptions.operator`).
 */
export function operatorJournal(config: Config): Promise<JournalStore> {
  refuseStateDirNotFolder(config);
  return openJournal({ url: config.journal.url, stateDir: config.stateDir }, { lock: false });
}

/**
 * A stateDir that is a file, refused as `run` and `once` refuse it, for a command that opens the
 * SQLite journal in it itself: mkdir would say no more than EEXIST. Only this one of their refusals: these
 * commands must work while an inbox share is unmounted.
 */
export function refuseStateDirNotFolder(config: Config): void {
  if (config.journal.url) return; // the journal is not in stateDir
  let isFolder = true;
  try {
    isFolder = fs.statSync(config.stateDir).isDirectory();
  } catch {
    // Missing: the journal's opening creates it.
  }
  if (!isFolder)
    throw new StartupError(
      'STARTUP_FOLDERS',
      `stateDir ${config.stateDir} is not a folder — point the key at a folder, or move what is there aside`,
    );
}

/**
 * The logger at the level asked for: --log-level, else --quiet (warn), else `quietDefault` when the
 * command shows its own progress (a terminal), else the config's log.level.
 */
export function loggerFor(loaded: LoadedConfig, quietDefault?: LogLevel): Logger & { flush(): void } {
  const configured = loaded.config.log.level;
  const calmer = (a: string, b: string): string => (LEVEL_ORDER.indexOf(a) >= LEVEL_ORDER.indexOf(b) ? a : b);
  const level =
    output.logLevel ??
    (output.quiet
      ? calmer(configured, 'warn')
      : quietDefault && !loaded.envKeys.includes('log.level')
        ? calmer(configured, quietDefault)
        : configured);
  const logger = createLogger(level, wantsPretty(loaded.config.log.pretty));
  if (loaded.envKeys.length) logger.info({ keys: loaded.envKeys }, 'config keys set from the environment');
  for (const w of loaded.warnings) logger.warn({ config: loaded.file }, w);
  return logger;
}
