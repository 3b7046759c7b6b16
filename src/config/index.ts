export {
  loadConfig,
  parseConfig,
  findConfigFile,
  applyEnvOverrides,
  ConfigError,
  DEFAULT_CONFIG_PATHS,
  CREDENTIAL_API_KEY,
} from './load.js';
export type { LoadedConfig } from './load.js';
export { ConfigSchema, Duration } from './schema.js';
export type { Config, MailboxConfig } from './schema.js';
export { folderRoles } from './folders.js';
export { redactUrl } from './redact.js';
export { secretsOf } from './secrets.js';
