/**
 * `GRIDSYNC_<KEY_PATH>` environment overrides: the key path in upper snake case, e.g.
 * GRIDSYNC_API_BASE_URL → api.baseUrl, GRIDSYNC_MAILBOXES_0_INBOX_DIR → mailboxes[0].inbox.dir.
 * Names are resolved against the schema's keys (./keys.ts), so every key can be set from the
 * environment, also when the file leaves its section out.
 */
import YAML from 'yaml';
import { nearest, type KeyNode } from '@gridsync/protocol/issues';
import { CONFIG_KEYS } from './keys.js';

/** One variable applied: its name and the key it set (never its value). */
export interface EnvOverride {
  readonly name: string;
  readonly keyPath: readonly (string | number)[];
}

/** The documented names (docs/operations.md), where the plain rule would double the section (API_API_KEY). */
const ENV_ALIASES: Record<string, readonly string[]> = {
  API_KEY: ['api', 'apiKey'],
  API_KEY_FILE: ['api', 'apiKeyFile'],
};

/** GRIDSYNC_ variables that are not config keys: crash tests, the pretty-log switch, debug stacks, test harness knobs. */
const NOT_CONFIG_ENV = /^(CRASH_AT|LOG_PRETTY_FORCE|DEBUG|REQUIRE_TOOLS|EDI_CORPUS|SOAK_\w*|MEM_TEST_\w*|TEST_\w*)$/;

const upperSnake = (key: string): string => key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();

/**
 * Sets every GRIDSYNC_ variable of `env` into `raw`; a name that is no key goes to `unknown`, with
 * the nearest real name when there is one.
 */
export function readEnvOverrides(raw: Record<string, unknown>, env: NodeJS.ProcessEnv, unknown: string[] = []): EnvOverride[] {
  const applied: EnvOverride[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith('GRIDSYNC_') || value === undefined) continue;
    const rest = name.slice('GRIDSYNC_'.length);
    if (NOT_CONFIG_ENV.test(rest)) continue;
    const keyPath = ENV_ALIASES[rest] ? [...(ENV_ALIASES[rest] as string[])] : resolveEnvPath(CONFIG_KEYS, rest);
    if (!keyPath) {
      const near = nearestEnvName(rest);
      unknown.push(`${name} is not a gridsync setting and is ignored${near ? ` (did you mean ${near}?)` : ''}`);
      continue;
    }
    setPath(raw, keyPath, isList(keyPath) ? listValue(value) : value);
    applied.push({ name, keyPath });
  }
  return applied;
}

/** As {@link readEnvOverrides}; returns the keys set (for the log), never their values. */
export function applyEnvOverrides(raw: Record<string, unknown>, env: NodeJS.ProcessEnv, unknown: string[] = []): string[] {
  return readEnvOverrides(raw, env, unknown).map((o) => o.keyPath.join('.'));
}

function isList(keyPath: readonly (string | number)[]): boolean {
  let node: KeyNode | undefined = CONFIG_KEYS;
  for (const seg of keyPath)
    node = node?.kind === 'section' ? node.keys.get(String(seg)) : node?.kind === 'entries' ? node.entry : undefined;
  return node?.kind === 'value' && node.list;
}

/** A list from one variable: a YAML flow sequence (`[a, "b c"]`) or items separated by `;`. */
function listValue(value: string): unknown {
  if (value.trim().startsWith('[')) {
    try {
      return YAML.parse(value) as unknown;
    } catch {
      return value; // the schema names the key and the expected form
    }
  }
  return value.split(';').map((s) => s.trim());
}

function resolveEnvPath(node: KeyNode, rest: string): (string | number)[] | undefined {
  if (rest === '') return node.kind === 'value' ? [] : undefined;
  switch (node.kind) {
    case 'value':
      return undefined;
    case 'entries': {
      const m = /^(\d+)(?:_(.*))?$/.exec(rest);
      const tail = m ? resolveEnvPath(node.entry, m[2] ?? '') : undefined;
      return m && tail ? [Number(m[1]), ...tail] : undefined;
    }
    case 'map':
      return node.value.kind === 'value' ? [rest] : undefined;
    case 'section':
      // Longest key first: API_KEY_FILE must match apiKeyFile, not apiKey + "_FILE".
      for (const [key, child] of [...node.keys].sort(([a], [b]) => upperSnake(b).length - upperSnake(a).length)) {
        const u = upperSnake(key);
        if (rest !== u && !rest.startsWith(`${u}_`)) continue;
        const tail = resolveEnvPath(child, rest.slice(u.length + 1));
        if (tail) return [key, ...tail];
      }
      return undefined;
  }
}

/** Every env name a setting has (entries with `index`), for "did you mean". */
function envNames(node: KeyNode, prefix: string, index: string): string[] {
  switch (node.kind) {
    case 'value':
      return [prefix];
    case 'map':
      return [];
    case 'entries':
      return envNames(node.entry, `${prefix}_${index}`, index);
    case 'section':
      return [...node.keys].flatMap(([k, child]) => envNames(child, prefix ? `${prefix}_${upperSnake(k)}` : upperSnake(k), index));
  }
}

function nearestEnvName(rest: string): string | undefined {
  const index = /^MAILBOXES_(\d+)_/.exec(rest)?.[1] ?? '0';
  const near = nearest(rest, [...Object.keys(ENV_ALIASES), 'DEBUG', ...envNames(CONFIG_KEYS, '', index)]);
  return near ? `GRIDSYNC_${near}` : undefined;
}

function setPath(root: Record<string, unknown>, keyPath: readonly (string | number)[], value: unknown): void {
  let node: Record<string | number, unknown> = root;
  keyPath.forEach((k, i) => {
    if (i === keyPath.length - 1) {
      node[k] = value;
      return;
    }
    if (node[k] === undefined || node[k] === null || typeof node[k] !== 'object') node[k] = typeof keyPath[i + 1] === 'number' ? [] : {};
    node = node[k] as Record<string | number, unknown>;
  });
}
