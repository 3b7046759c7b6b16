export { loadConfig, parseConfig, findConfigFile, ConfigError, DEFAULT_CONFIG_PATHS, CREDENTIAL_API_KEY } from './load.js';
export type { LoadedConfig } from './load.js';
export { applyEnvOverrides } from './env.js';
export { ConfigSchema, Duration } from './schema.js';
export type { Config, MailboxConfig, InboxSettings, OutboxSettings, HookSettings } from './schema.js';
export { accountName } from './accounts.js';
export { folderRoles, workDirOf } from './folders.js';
export { redactUrl } from './redact.js';
export { secretsOf } from './secrets.js';
