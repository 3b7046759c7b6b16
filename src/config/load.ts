/**
 * Loading the config: find the file, parse YAML, apply GRIDSYNC_… env overrides, validate with zod
 * (errors name the key and the expected form), read secrets from files or systemd credentials, and
 * resolve what the rest of the daemon needs (absolute paths, numeric group ids).
 */
import fs from 'node:fs';
import path from 'node:path';
import { validate as validCron } from 'node-cron';
import YAML from 'yaml';
import { serviceUrlProblem } from '../api/index.js';
import { GridsyncError, holdSecrets } from '../errors/index.js';
import { findFolderConflict, folderRoles } from './folders.js';
import { configFileWarnings, implicitConfigProblem, secretFileWarning } from './trust.js';
import { secretsOf } from './secrets.js';
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

export const DEFAULT_CONFIG_PATHS = ['config/gridsync.yaml', '/etc/gridsync/gridsync.yaml'];

/** The systemd credential name `LoadCredential=gridsync-api-key:…` provides. */
export const CREDENTIAL_API_KEY = 'gridsync-api-key';
export const CREDENTIAL_PASSWORD = 'gridsync-password';

/**
 * The config file: `-c FILE`, else the first default that exists. A default relative to the working
 * directory is skipped (with the reason in `skipped`) unless the invoking user or root owns it and
 * nobody else can write it or its folders.
 */
export function findConfigFile(explicit: string | undefined, cwd = process.cwd(), skipped: string[] = []): string {
  if (explicit) {
    if (!fs.existsSync(explicit)) throw new ConfigError(`config file ${explicit} does not exist`);
    return explicit;
  }
  for (const p of DEFAULT_CONFIG_PATHS) {
    const full = path.resolve(cwd, p);
    if (!fs.existsSync(full)) continue;
    const problem = path.isAbsolute(p) ? undefined : implicitConfigProblem(full, cwd);
    if (problem) {
      skipped.push(`ignoring ${full} found in the working directory: ${problem} (pass -c ${full} to use it anyway)`);
      continue;
    }
    return full;
  }
  throw new ConfigError(
    `no config file: pass -c FILE, or create ${DEFAULT_CONFIG_PATHS.join(' or ')}${skipped.length ? `; ${skipped.join('; ')}` : ''}`,
  );
}

const upperSnake = (key: string): string => key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();

/** Top-level sections and keys that env overrides may set even when the file leaves them out. */
const KNOWN_KEYS: Record<string, readonly string[]> = {
  '': ['api', 'emulator', 'stateDir', 'log', 'http', 'schedule', 'retention', 'shutdownTimeout', 'createDirs', 'mailboxes'],
  api: [
    'baseUrl',
    'protocol',
    'apiKey',
    'apiKeyFile',
    'login',
    'password',
    'passwordFile',
    'allowInsecureHttp',
    'maxAttempts',
    'connections',
    'timeouts',
  ],
  'api.timeouts': ['connectMs', 'headersMs', 'bodyMs'],
  emulator: ['dataFile', 'port', 'rootKey'],
  log: ['level', 'pretty'],
  http: ['enabled', 'host', 'port'],
  schedule: ['poll', 'timezone', 'outbound', 'cron', 'windowFollowUp'],
  retention: ['journalDays'],
  'mailboxes[]': Object.keys(MailboxSchema.shape),
  'mailboxes[].inbox': Object.keys(InboxSchema.shape),
  'mailboxes[].outbox': Object.keys(OutboxSchema.shape),
};

/** The documented names (docs/operations.md), where the plain rule would double the section (API_API_KEY). */
const ENV_ALIASES: Record<string, readonly string[]> = {
  API_KEY: ['api', 'apiKey'],
  API_KEY_FILE: ['api', 'apiKeyFile'],
};

/**
 * Applies `GRIDSYNC_<KEY_PATH>` variables: the key path in upper snake case, e.g.
 * GRIDSYNC_API_BASE_URL → api.baseUrl, GRIDSYNC_MAILBOXES_0_INBOX_DIR → mailboxes[0].inbox.dir.
 * Returns the keys it set (for the log), never their values.
 */
export function applyEnvOverrides(raw: Record<string, unknown>, env: NodeJS.ProcessEnv, unknown: string[] = []): string[] {
  const applied: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith('GRIDSYNC_') || value === undefined) continue;
    const rest = name.slice('GRIDSYNC_'.length);
    if (NOT_CONFIG_ENV.test(rest)) continue;
    const keyPath = ENV_ALIASES[rest] ? [...(ENV_ALIASES[rest] as string[])] : resolveEnvPath(raw, rest, '');
    if (!keyPath) {
      const near = nearestEnvName(rest);
      unknown.push(`${name} is not a gridsync setting and is ignored${near ? ` (did you mean ${near}?)` : ''}`);
      continue;
    }
    setPath(raw, keyPath, name === 'GRIDSYNC_SCHEDULE_CRON' ? value.split(';').map((s) => s.trim()) : value);
    applied.push(keyPath.join('.'));
  }
  return applied;
}

/** GRIDSYNC_ variables that are not config keys: crash tests, the pretty-log switch, debug stacks, test harness knobs. */
const NOT_CONFIG_ENV = /^(CRASH_AT|LOG_PRETTY_FORCE|DEBUG|SOAK_\w*|MEM_TEST_\w*|TEST_\w*)$/;

/** Every env name a config key has (mailbox keys with the index of the misspelt name). */
function envNames(index: string): string[] {
  const names = [...Object.keys(ENV_ALIASES), 'DEBUG'];
  const walk = (section: string, prefix: string): void => {
    for (const key of KNOWN_KEYS[section] ?? []) {
      const sub = section ? `${section}.${key}` : key;
      const name = `${prefix}${upperSnake(key)}`;
      if (key === 'mailboxes') walk('mailboxes[]', `${name}_${index}_`);
      else if (KNOWN_KEYS[sub]) walk(sub, `${name}_`);
      else names.push(name);
    }
  };
  walk('', '');
  return names;
}

function nearestEnvName(rest: string): string | undefined {
  const index = /^MAILBOXES_(\d+)_/.exec(rest)?.[1] ?? '0';
  let best: { name: string; d: number } | undefined;
  for (const name of envNames(index)) {
    const d = editDistance(rest, name);
    if (!best || d < best.d) best = { name, d };
  }
  return best && best.d <= Math.max(2, Math.floor(rest.length / 5)) ? `GRIDSYNC_${best.name}` : undefined;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++)
      cur[j] = Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length] ?? 0;
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
  const line = fs.existsSync('/etc/group')
    ? fs
        .readFileSync('/etc/group', 'utf8')
        .split('\n')
        .find((l) => l.split(':')[0] === group)
    : undefined;
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
  /** Things an operator should fix that do not stop gridsync (logged at warn, shown by doctor). */
  readonly warnings: string[];
}

/**
 * Parses and validates a config object (YAML already parsed). `source` names it in errors;
 * relative paths resolve against `baseDir` (the config file's directory), so the service does not
 * depend on its working directory.
 */
export function parseConfig(raw: unknown, source: string, env: NodeJS.ProcessEnv = process.env, baseDir = process.cwd()): LoadedConfig {
  const obj = (raw && typeof raw === 'object' && !Array.isArray(raw) ? structuredClone(raw) : {}) as Record<string, unknown>;
  const warnings: string[] = [];
  const envKeys = applyEnvOverrides(obj, env, warnings);
  if (env.NODE_TLS_REJECT_UNAUTHORIZED === '0') {
    throw new ConfigError(
      'NODE_TLS_REJECT_UNAUTHORIZED=0 is set: it turns off certificate checks for every connection, so anyone on the path could take the API key. gridsync refuses to start with it; for a private CA give its certificate in NODE_EXTRA_CA_CERTS=/path/ca.pem instead',
      'NODE_TLS_REJECT_UNAUTHORIZED',
    );
  }
  const secretInFile =
    (typeof (obj.api as Record<string, unknown> | undefined)?.apiKey === 'string' && !envKeys.includes('api.apiKey')) ||
    (typeof (obj.api as Record<string, unknown> | undefined)?.password === 'string' && !envKeys.includes('api.password'));
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
    // The client's own rule, so an address accepted here is never refused when the client starts.
    const problem = serviceUrlProblem(new URL(api.baseUrl), api.allowInsecureHttp);
    if (problem) throw new ConfigError(`config ${source}: api.baseUrl: ${problem}`, 'api.baseUrl');
  }
  const credentials = env.CREDENTIALS_DIRECTORY;
  const credential = (name: string): string | undefined =>
    credentials && fs.existsSync(path.join(credentials, name)) ? path.join(credentials, name) : undefined;
  // First match wins: the environment; a systemd credential (under systemd it is how the unit hands
  // the key to a service user that cannot read the root-only file — apiKeyFile usually names that
  // very file, so trying it first failed with EACCES); the key file (it also replaces a key written
  // in the config: the Docker image's default config has a demo key); the key in the config.
  const keyCredential = credential(CREDENTIAL_API_KEY);
  if (!envKeys.includes('api.apiKey') && !api.login) {
    if (keyCredential) api.apiKey = readSecretFile(keyCredential, `systemd credential ${CREDENTIAL_API_KEY}`);
    else if (api.apiKeyFile) {
      api.apiKey = readSecretFile(abs(api.apiKeyFile), 'api.apiKeyFile');
      const w = secretFileWarning(abs(api.apiKeyFile), 'api.apiKeyFile');
      if (w) warnings.push(w);
    }
  }
  const passwordCredential = credential(CREDENTIAL_PASSWORD);
  if (api.login && !envKeys.includes('api.password')) {
    if (passwordCredential) api.password = readSecretFile(passwordCredential, `systemd credential ${CREDENTIAL_PASSWORD}`);
    else if (api.passwordFile) {
      api.password = readSecretFile(abs(api.passwordFile), 'api.passwordFile');
      const w = secretFileWarning(abs(api.passwordFile), 'api.passwordFile');
      if (w) warnings.push(w);
    }
  }
  // The embedded emulator's demo key guards nothing: no warning for the quick-start config.
  if (secretInFile && api.baseUrl !== 'embedded' && fs.existsSync(source)) warnings.push(...configFileWarnings(source, true));
  else if (fs.existsSync(source)) warnings.push(...configFileWarnings(source, false));
  if (!api.apiKey && !(api.login && api.password)) {
    throw new ConfigError(
      `config ${source}: api.apiKey: no credentials — set api.apiKey (or GRIDSYNC_API_KEY), api.apiKeyFile, the systemd credential ${CREDENTIAL_API_KEY}, or api.login with api.password`,
      'api.apiKey',
    );
  }
  config.stateDir = abs(config.stateDir);
  if (config.emulator.dataFile) config.emulator.dataFile = abs(config.emulator.dataFile);
  const names = new Set<string>();
  const gids: (number | undefined)[] = [];
  config.mailboxes.forEach((m, i) => {
    // Without a mailboxId the daemon names the mailbox `mb<id>` once the service tells the id.
    if (m.mailboxId) m.name ??= `mb${m.mailboxId}`;
    if (m.name !== undefined) {
      if (names.has(m.name))
        throw new ConfigError(`config ${source}: mailboxes[${i}].name: ${m.name} is used twice`, `mailboxes[${i}].name`);
      names.add(m.name);
    }
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
    if (!validCron(expr))
      throw new ConfigError(
        `config ${source}: schedule.cron[${i}]: expected a cron expression such as "0 2 * * *", got ${JSON.stringify(expr)}`,
        `schedule.cron[${i}]`,
      );
  });
  if (config.schedule.outbound === 'windows' && !config.schedule.cron?.length) {
    throw new ConfigError(`config ${source}: schedule.outbound: "windows" needs schedule.cron`, 'schedule.outbound');
  }
  if (config.schedule.timezone) {
    try {
      new Intl.DateTimeFormat('en', { timeZone: config.schedule.timezone });
    } catch {
      throw new ConfigError(
        `config ${source}: schedule.timezone: expected an IANA time zone such as Europe/Berlin, got ${JSON.stringify(config.schedule.timezone)}`,
        'schedule.timezone',
      );
    }
  }
  // From here on, every sink of this process masks these values.
  holdSecrets(secretsOf(config));
  return { config, file: source, envKeys, gids, warnings };
}

function formatPath(p: readonly PropertyKey[]): string {
  if (p.length === 0) return '(top level)';
  return p.reduce<string>((acc, seg) => (typeof seg === 'number' ? `${acc}[${seg}]` : acc ? `${acc}.${String(seg)}` : String(seg)), '');
}

/** Finds, reads and validates the config file. */
export function loadConfig(explicit?: string, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): LoadedConfig {
  const skipped: string[] = [];
  const file = findConfigFile(explicit, cwd, skipped);
  let raw: unknown;
  try {
    raw = YAML.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new ConfigError(`config ${file}: not valid YAML: ${(err as Error).message.split('\n')[0] ?? ''}`);
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ConfigError(`config ${file}: expected a YAML mapping with api, stateDir and mailboxes at the top level`);
  }
  const loaded = parseConfig(raw, file, env, path.dirname(path.resolve(file)));
  loaded.warnings.unshift(...skipped);
  return loaded;
}
