/**
 * Loading the config: find the file, parse YAML, apply GRIDSYNC_… env overrides, validate with zod
 * (errors name the key and the expected form), read secrets from files or systemd credentials, and
 * resolve what the rest of the daemon needs (absolute paths, numeric group ids).
 */
import fs from 'node:fs';
import path from 'node:path';
import { Cron } from 'croner';
import { YAMLError } from 'yaml';
import type { z } from 'zod';
import { serviceUrlProblem } from '../api/index.js';
import { GridsyncError, holdSecrets } from '../errors/index.js';
import { groupId } from './accounts.js';
import { findFolderConflict, folderRoles } from './folders.js';
import { configFileWarnings, implicitConfigProblem, secretFileWarning } from './trust.js';
import { secretsOf } from './secrets.js';
import { readEnvOverrides, type EnvOverride } from './env.js';
import { describeIssue, formatKeyPath } from '@gridsync/protocol/issues';
import { CONFIG_KEYS } from './keys.js';
import { ConfigSchema, type Config } from './schema.js';
import { parseConfigYaml } from './yaml-text.js';

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

/** Resolves the group of inbox files to a numeric gid (names through the system: LDAP and sssd groups too). */
function resolveGid(group: string | number, key: string): number {
  if (typeof group === 'number' || /^\d+$/.test(group)) return Number(group);
  const gid = groupId(group);
  if (gid === undefined)
    throw new ConfigError(`${key}: the system knows no group named ${group} (getent group ${group}); give its name or numeric gid`);
  return gid;
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
  /** Where the secret in use came from (the first match of the documented order), for doctor. */
  readonly secretSource: string;
}

/**
 * Parses and validates a config object (YAML already parsed). `source` names it in errors;
 * relative paths resolve against `baseDir` (the config file's directory), so the service does not
 * depend on its working directory.
 */
export function parseConfig(raw: unknown, source: string, env: NodeJS.ProcessEnv = process.env, baseDir = process.cwd()): LoadedConfig {
  const obj = (raw && typeof raw === 'object' && !Array.isArray(raw) ? structuredClone(raw) : {}) as Record<string, unknown>;
  const warnings: string[] = [];
  const overrides = readEnvOverrides(obj, env, warnings);
  const envKeys = overrides.map((o) => o.keyPath.join('.'));
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
  if (!parsed.success) throw invalidConfig(parsed.error.issues, obj, source, overrides);
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
  // A secret in a file the config names (`key`): read, and warned about when others may read it.
  const secretFile = (file: string, key: string): string => {
    const value = readSecretFile(abs(file), key);
    const w = secretFileWarning(abs(file), key);
    if (w) warnings.push(w);
    return value;
  };
  // The secret of a systemd credential, else of its file key; undefined when neither is there.
  const secretFrom = (credentialName: string, file: string | undefined, key: string): { value: string; source: string } | undefined => {
    const fromCredential = credential(credentialName);
    if (fromCredential)
      return {
        value: readSecretFile(fromCredential, `systemd credential ${credentialName}`),
        source: `systemd credential ${credentialName}`,
      };
    return file ? { value: secretFile(file, key), source: `${key} ${abs(file)}` } : undefined;
  };
  // First match wins: the environment; a systemd credential (under systemd it is how the unit hands
  // the key to a service user that cannot read the root-only file — apiKeyFile usually names that
  // very file, so trying it first failed with EACCES); the key file (it also replaces a key written
  // in the config: the Docker image's default config has a demo key); the key in the config.
  let secretSource = api.baseUrl === 'embedded' && !api.apiKey && !api.login ? 'none (the embedded emulator)' : 'api.apiKey in the config';
  if (envKeys.includes('api.apiKey') && !api.login) secretSource = 'the environment (GRIDSYNC_API_KEY)';
  if (!envKeys.includes('api.apiKey') && !api.login) {
    const key = secretFrom(CREDENTIAL_API_KEY, api.apiKeyFile, 'api.apiKeyFile');
    if (key) {
      api.apiKey = key.value;
      secretSource = key.source;
    }
  }
  if (api.login) secretSource = envKeys.includes('api.password') ? 'the environment (GRIDSYNC_API_PASSWORD)' : 'api.password in the config';
  if (api.login && !envKeys.includes('api.password')) {
    const password = secretFrom(CREDENTIAL_PASSWORD, api.passwordFile, 'api.passwordFile');
    if (password) {
      api.password = password.value;
      secretSource = password.source;
    }
  }
  if (config.journal.urlFile && !envKeys.includes('journal.url')) {
    config.journal.url = secretFile(config.journal.urlFile, 'journal.urlFile');
    if (!/^postgres(ql)?:\/\//i.test(config.journal.url))
      throw new ConfigError(
        `config ${source}: journal.urlFile: ${config.journal.urlFile} does not hold a postgres:// URL`,
        'journal.urlFile',
      );
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
  if (config.callbacks) {
    const cb = config.callbacks;
    if (cb.tls) cb.tls = { certFile: abs(cb.tls.certFile), keyFile: abs(cb.tls.keyFile) };
    if (cb.passwordFile) cb.passwordFile = abs(cb.passwordFile);
    // A callback starts an inbound cycle at once: that would fetch outside the transfer windows.
    if (config.schedule.cron?.length)
      throw new ConfigError(
        `config ${source}: callbacks: not with schedule.cron (a callback would start a cycle outside the windows)`,
        'callbacks',
      );
  }
  // From here on, every sink of this process masks these values.
  holdSecrets(secretsOf(config));
  return { config, file: source, envKeys, gids, warnings, secretSource };
}

/** Whether croner (the scheduler's library) accepts `expr`: 5 fields, or 6 with seconds first. */
function validCron(expr: string): boolean {
  try {
    const probe = new Cron(expr, { paused: true });
    probe.stop();
    return true;
  } catch {
    return false;
  }
}

/**
 * The error for a config the schema refuses: each problem in plain words under its key, blamed on
 * the environment variable that set the key when one did (the file is not at fault then).
 */
function invalidConfig(issues: readonly z.core.$ZodIssue[], raw: unknown, source: string, overrides: readonly EnvOverride[]): ConfigError {
  const fromEnv = (p: readonly PropertyKey[]): EnvOverride | undefined =>
    overrides.find((o) => o.keyPath.length <= p.length && o.keyPath.every((seg, i) => seg === p[i]));
  const lines = issues.slice(0, 5).map((i) => {
    const env = fromEnv(i.path);
    const where = env ? `${env.name} (environment, sets ${formatKeyPath(i.path)})` : formatKeyPath(i.path);
    return `  ${where}: ${describeIssue(i, raw, CONFIG_KEYS)}`;
  });
  const onlyEnv = issues.every((i) => fromEnv(i.path));
  const first = issues[0];
  return new ConfigError(
    `${onlyEnv ? 'the environment sets an invalid value' : `config ${source} is invalid`}:\n${lines.join('\n')}`,
    first ? formatKeyPath(first.path) : undefined,
  );
}

/** `config FILE:LINE:COL: not valid YAML: reason`, with the offending line and a caret under the column. */
function yamlError(file: string, text: string, err: unknown): ConfigError {
  const pos = err instanceof YAMLError ? err.linePos?.[0] : undefined;
  const reason = ((err as Error).message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '');
  if (!pos) return new ConfigError(`config ${file}: not valid YAML: ${reason}`);
  const line = text.split(/\r?\n/)[pos.line - 1] ?? '';
  const gutter = String(pos.line).length;
  return new ConfigError(
    `config ${file}:${pos.line}:${pos.col}: not valid YAML (line ${pos.line}, column ${pos.col}): ${reason}\n  ${pos.line} | ${line}\n  ${' '.repeat(gutter)} | ${' '.repeat(Math.max(0, pos.col - 1))}^`,
  );
}

/** Finds, reads and validates the config file. */
export function loadConfig(explicit?: string, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): LoadedConfig {
  const skipped: string[] = [];
  const file = findConfigFile(explicit, cwd, skipped);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`config ${file}: cannot be read: ${(err as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = parseConfigYaml(text);
  } catch (err) {
    throw yamlError(file, text, err);
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ConfigError(`config ${file}: expected a YAML mapping with api, stateDir and mailboxes at the top level`);
  }
  const loaded = parseConfig(raw, file, env, path.dirname(path.resolve(file)));
  loaded.warnings.unshift(...skipped);
  return loaded;
}
