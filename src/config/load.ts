/**
 * Loading the config: find the file, parse YAML, apply GRIDSYNC_… env overrides, validate with zod
 * (errors name the key and the expected form), read secrets from files or systemd credentials, and
 * resolve what the rest of the daemon needs (absolute paths, numeric group ids).
 */
import fs from 'node:fs';
import path from 'node:path';
import { validate as validCron } from 'node-cron';
import YAML from 'yaml';
import { GridsyncError } from '../errors/index.js';
import { findFolderConflict, folderRoles } from './folders.js';
import { ConfigSchema, InboxSchema, MailboxSchema, OutboxSchema, type Config } from './schema.js';

export class ConfigError extends GridsyncError {
  readonly code = 'CONFIG_INVALID';

  constructor(
    message: string,
    /** The key path at fault (`mailboxes[0].outbox.stableMs`), when one key is. */
    readonly key?: string,
  ) {
    super(message);
  }
}

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

export const DEFAULT_CONFIG_PATHS = ['config/gridsync.yaml', '/etc/gridsync/gridsync.yaml'];

/** The systemd credential name `LoadCredential=gridsync-api-key:…` provides. */
export const CREDENTIAL_API_KEY = 'gridsync-api-key';
export const CREDENTIAL_PASSWORD = 'gridsync-password';

export function findConfigFile(explicit: string | undefined, cwd = process.cwd()): string {
  if (explicit) {
    if (!fs.existsSync(explicit)) throw new ConfigError(`config file ${explicit} does not exist`);
    return explicit;
  }
  for (const p of DEFAULT_CONFIG_PATHS) {
    const full = path.resolve(cwd, p);
    if (fs.existsSync(full)) return full;
  }
  throw new ConfigError(`no config file: pass -c FILE, or create ${DEFAULT_CONFIG_PATHS.join(' or ')}`);
}

const upperSnake = (key: string): string => key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();

/** Top-level sections and keys that env overrides may set even when the file leaves them out. */
const KNOWN_KEYS: Record<string, readonly string[]> = {
  '': ['api', 'emulator', 'stateDir', 'log', 'http', 'schedule', 'retention', 'shutdownTimeout', 'mailboxes'],
  api: ['baseUrl', 'apiKey', 'apiKeyFile', 'login', 'password', 'passwordFile', 'allowInsecureHttp', 'maxAttempts', 'connections', 'timeouts'],
  'api.timeouts': ['connectMs', 'headersMs', 'bodyMs'],
  emulator: ['dataFile', 'port', 'rootKey'],
  log: ['level', 'pretty'],
  http: ['enabled', 'host', 'port'],
  schedule: ['poll', 'timezone', 'outbound', 'cron'],
  retention: ['journalDays'],
  'mailboxes[]': Object.keys(MailboxSchema.shape),
  'mailboxes[].inbox': Object.keys(InboxSchema.shape),
  'mailboxes[].outbox': Object.keys(OutboxSchema.shape),
};

/** The names DESIGN.md promises, where the plain rule would double the section (API_API_KEY). */
const ENV_ALIASES: Record<string, readonly string[]> = {
  API_KEY: ['api', 'apiKey'],
  API_KEY_FILE: ['api', 'apiKeyFile'],
};

/**
 * Applies `GRIDSYNC_<KEY_PATH>` variables: the key path in upper snake case, e.g.
 * GRIDSYNC_API_BASE_URL → api.baseUrl, GRIDSYNC_MAILBOXES_0_INBOX_DIR → mailboxes[0].inbox.dir.
 * Returns the keys it set (for the log), never their values.
 */
export function applyEnvOverrides(raw: Record<string, unknown>, env: NodeJS.ProcessEnv): string[] {
  const applied: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith('GRIDSYNC_') || value === undefined) continue;
    const rest = name.slice('GRIDSYNC_'.length);
    if (rest === 'CRASH_AT' || rest === 'LOG_PRETTY_FORCE') continue;
    const keyPath = ENV_ALIASES[rest] ? [...(ENV_ALIASES[rest] as string[])] : resolveEnvPath(raw, rest, '');
    if (!keyPath) continue;
    setPath(raw, keyPath, name === 'GRIDSYNC_SCHEDULE_CRON' ? value.split(';').map((s) => s.trim()) : value);
    applied.push(keyPath.join('.'));
  }
  return applied;
}

function resolveEnvPath(node: unknown, rest: string, section: string): (string | number)[] | undefined {
  if (rest === '') return [];
  if (Array.isArray(node)) {
    const m = /^(\d+)(?:_(.*))?$/.exec(rest);
    if (!m) return undefined;
    const tail = resolveEnvPath(node[Number(m[1])], m[2] ?? '', `${section}[]`);
    return tail ? [Number(m[1]), ...tail] : undefined;
  }
  const obj = (node && typeof node === 'object' ? node : {}) as Record<string, unknown>;
  const keys = new Set([...Object.keys(obj), ...(KNOWN_KEYS[section] ?? [])]);
  // Longest key first: API_KEY_FILE must match apiKeyFile, not apiKey + "_FILE".
  for (const key of [...keys].sort((a, b) => upperSnake(b).length - upperSnake(a).length)) {
    const u = upperSnake(key);
    if (rest === u) return [key];
    if (rest.startsWith(`${u}_`)) {
      const tail = resolveEnvPath(obj[key], rest.slice(u.length + 1), section === '' ? key : `${section}.${key}`);
      if (tail) return [key, ...tail];
    }
  }
  return undefined;
}

function setPath(root: Record<string, unknown>, keyPath: (string | number)[], value: unknown): void {
  let node: Record<string | number, unknown> = root;
  keyPath.forEach((k, i) => {
    if (i === keyPath.length - 1) {
      node[k] = value;
      return;
    }
    if (node[k] === undefined || node[k] === null || typeof node[k] !== 'object') node[k] = {};
    node = node[k] as Record<string | number, unknown>;
  });
}

function readSecretFile(file: string, key: string): string {
  try {
    const v = fs.readFileSync(file, 'utf8').trim();
    if (!v) throw new ConfigError(`${key}: ${file} is empty`);
    return v;
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError(`${key}: cannot read ${file}: ${(err as Error).message}`);
  }
}

/** Resolves the group of inbox files to a numeric gid (names via /etc/group). */
function resolveGid(group: string | number, key: string): number {
  if (typeof group === 'number' || /^\d+$/.test(group)) return Number(group);
  const line = fs.existsSync('/etc/group') ? fs.readFileSync('/etc/group', 'utf8').split('\n').find((l) => l.split(':')[0] === group) : undefined;
  const gid = line?.split(':')[2];
  if (gid === undefined) throw new ConfigError(`${key}: no group named ${group} in /etc/group`);
  return Number(gid);
}

export interface LoadedConfig {
  readonly config: Config;
  readonly file: string;
  /** Keys set from the environment (names only). */
  readonly envKeys: string[];
  /** Resolved gids per mailbox index (inbox.group). */
  readonly gids: (number | undefined)[];
}

/**
 * Parses and validates a config object (YAML already parsed). `source` names it in errors;
 * relative paths resolve against `baseDir` (the config file's directory), so the service does not
 * depend on its working directory.
 */
export function parseConfig(raw: unknown, source: string, env: NodeJS.ProcessEnv = process.env, baseDir = process.cwd()): LoadedConfig {
  const obj = (raw && typeof raw === 'object' && !Array.isArray(raw) ? structuredClone(raw) : {}) as Record<string, unknown>;
  const envKeys = applyEnvOverrides(obj, env);
  const parsed = ConfigSchema.safeParse(obj);
  if (!parsed.success) {
    const lines = parsed.error.issues.slice(0, 5).map((i) => `  ${formatPath(i.path)}: ${i.message}`);
    const first = parsed.error.issues[0];
    throw new ConfigError(`config ${source} is invalid:\n${lines.join('\n')}`, first ? formatPath(first.path) : undefined);
  }
  const config = parsed.data;
  const api = config.api;
  const abs = (p: string): string => path.resolve(baseDir, p);
  if (api.baseUrl !== 'embedded') {
    const url = new URL(api.baseUrl);
    if (url.protocol === 'http:' && !LOOPBACK.test(url.hostname) && !api.allowInsecureHttp) {
      throw new ConfigError(
        `config ${source}: api.baseUrl: plain http:// to ${url.hostname} is refused (the API key would cross the network in clear text); use https://, or set api.allowInsecureHttp: true`,
        'api.baseUrl',
      );
    }
  }
  const credentials = env.CREDENTIALS_DIRECTORY;
  // A key file beats a key written in the config (the Docker image's default config has a demo
  // key; GRIDSYNC_API_KEY_FILE must replace it) — unless the key itself came from the environment.
  if (api.apiKeyFile && !envKeys.includes('api.apiKey')) api.apiKey = readSecretFile(abs(api.apiKeyFile), 'api.apiKeyFile');
  if (!api.apiKey && !api.login && credentials && fs.existsSync(path.join(credentials, CREDENTIAL_API_KEY))) {
    api.apiKey = readSecretFile(path.join(credentials, CREDENTIAL_API_KEY), `systemd credential ${CREDENTIAL_API_KEY}`);
  }
  if (api.login && api.passwordFile && !envKeys.includes('api.password')) api.password = readSecretFile(abs(api.passwordFile), 'api.passwordFile');
  if (api.login && !api.password && credentials && fs.existsSync(path.join(credentials, CREDENTIAL_PASSWORD))) {
    api.password = readSecretFile(path.join(credentials, CREDENTIAL_PASSWORD), `systemd credential ${CREDENTIAL_PASSWORD}`);
  }
  if (!api.apiKey && !(api.login && api.password)) {
    throw new ConfigError(`config ${source}: api.apiKey: no credentials — set api.apiKey (or GRIDSYNC_API_KEY), api.apiKeyFile, the systemd credential ${CREDENTIAL_API_KEY}, or api.login with api.password`, 'api.apiKey');
  }
  config.stateDir = abs(config.stateDir);
  if (config.emulator.dataFile) config.emulator.dataFile = abs(config.emulator.dataFile);
  const names = new Set<string>();
  const gids: (number | undefined)[] = [];
  config.mailboxes.forEach((m, i) => {
    m.name ??= m.mailboxId ? `mb${m.mailboxId}` : `mailbox${i}`;
    if (names.has(m.name)) throw new ConfigError(`config ${source}: mailboxes[${i}].name: ${m.name} is used twice`, `mailboxes[${i}].name`);
    names.add(m.name);
    if (m.inbox) {
      m.inbox.dir = abs(m.inbox.dir);
      if (m.inbox.stagingDir) m.inbox.stagingDir = abs(m.inbox.stagingDir);
    }
    if (m.outbox) {
      m.outbox.dir = abs(m.outbox.dir);
      m.outbox.errorDir = abs(m.outbox.errorDir);
      if (m.outbox.sentDir) m.outbox.sentDir = abs(m.outbox.sentDir);
      if (m.outbox.processingDir) m.outbox.processingDir = abs(m.outbox.processingDir);
    }
    gids.push(m.inbox?.group !== undefined ? resolveGid(m.inbox.group, `config ${source}: mailboxes[${i}].inbox.group`) : undefined);
  });
  const conflict = findFolderConflict(folderRoles(config));
  if (conflict) throw new ConfigError(`config ${source}: ${conflict.message}`, conflict.a.key);
  (config.schedule.cron ?? []).forEach((expr, i) => {
    if (!validCron(expr)) throw new ConfigError(`config ${source}: schedule.cron[${i}]: expected a cron expression such as "0 2 * * *", got ${JSON.stringify(expr)}`, `schedule.cron[${i}]`);
  });
  if (config.schedule.outbound === 'windows' && !config.schedule.cron?.length) {
    throw new ConfigError(`config ${source}: schedule.outbound: "windows" needs schedule.cron`, 'schedule.outbound');
  }
  if (config.schedule.timezone) {
    try {
      new Intl.DateTimeFormat('en', { timeZone: config.schedule.timezone });
    } catch {
      throw new ConfigError(`config ${source}: schedule.timezone: expected an IANA time zone such as Europe/Berlin, got ${JSON.stringify(config.schedule.timezone)}`, 'schedule.timezone');
    }
  }
  return { config, file: source, envKeys, gids };
}

function formatPath(p: readonly PropertyKey[]): string {
  if (p.length === 0) return '(top level)';
  return p.reduce<string>((acc, seg) => (typeof seg === 'number' ? `${acc}[${seg}]` : acc ? `${acc}.${String(seg)}` : String(seg)), '');
}

/** Finds, reads and validates the config file. */
export function loadConfig(explicit?: string, env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  const file = findConfigFile(explicit);
  let raw: unknown;
  try {
    raw = YAML.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new ConfigError(`config ${file}: not valid YAML: ${(err as Error).message.split('\n')[0] ?? ''}`);
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ConfigError(`config ${file}: expected a YAML mapping with api, stateDir and mailboxes at the top level`);
  }
  return parseConfig(raw, file, env, path.dirname(path.resolve(file)));
}
