/** What the daemon commands share: config loading with exit code 2 on errors, and the logger. */
import { ConfigError, loadConfig, type LoadedConfig } from '../config/index.js';
import { createLogger, wantsPretty } from '../daemon/index.js';
import type { Logger } from '../log.js';
import { UsageError } from './args.js';

export const CONFIG_OPTION = { config: { type: 'string', short: 'c' } } as const;

export function loadConfigOrThrow(file: string | undefined): LoadedConfig {
  try {
    return loadConfig(file);
  } catch (err) {
    if (err instanceof ConfigError) throw new UsageError(err.message);
    throw err;
  }
}

export function loggerFor(loaded: LoadedConfig): Logger & { flush(): void } {
  const logger = createLogger(loaded.config.log.level, wantsPretty(loaded.config.log.pretty));
  if (loaded.envKeys.length) logger.info({ keys: loaded.envKeys }, 'config keys set from the environment');
  for (const w of loaded.warnings) logger.warn({ config: loaded.file }, w);
  return logger;
}
