/**
 * The zod schema is the one source of the config's keys: every key can be set from the
 * environment (also when the file leaves its section out), and the example file that claims to
 * show every key shows exactly the schema's keys.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { applyEnvOverrides, parseConfig } from '../../../src/config/index.js';
import { settingPaths } from '../../../src/config/keys.js';

const root = path.resolve(import.meta.dirname, '../../..');

const minimal = (): Record<string, unknown> => ({
  api: { baseUrl: 'https://grid.example.com', apiKey: 'k-123456' },
  stateDir: '/tmp/gs-state',
  mailboxes: [{ mailboxId: 1001, inbox: { dir: '/tmp/gs-in' } }],
});

/** `mailboxes[].outbox.stableMs` → `GRIDSYNC_MAILBOXES_0_OUTBOX_STABLE_MS`; `partners.*` → `GRIDSYNC_PARTNERS_7001`. */
const envName = (setting: string): string =>
  `GRIDSYNC_${setting
    .replace(/\[\]/g, '.0')
    .replace(/\*/g, '7001')
    .split('.')
    .map((k) => k.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase())
    .join('_')}`;

describe('every config key can be set from the environment', () => {
  const settings = settingPaths();

  it('the schema has the keys the example documents (sanity of the walk)', () => {
    expect(settings).toEqual(
      expect.arrayContaining(['api.baseUrl', 'api.limits.maxBodyBytes', 'once.drainTimeout', 'mailboxes[].outbox.stableMs']),
    );
  });

  it.each(settings)('%s, with its section absent from the file', (setting) => {
    const raw: Record<string, unknown> = { api: {} };
    const unknown: string[] = [];
    const keys = applyEnvOverrides(raw, { [envName(setting)]: 'x' }, unknown);
    expect(unknown).toEqual([]);
    expect(keys).toEqual([setting.replace(/\[\]/g, '.0').replace(/\*/g, '7001')]);
  });

  it('the names that used to be refused without their section take effect', () => {
    const { config } = parseConfig(
      minimal(),
      't',
      {
        GRIDSYNC_ONCE_DRAIN_TIMEOUT: '90s',
        GRIDSYNC_HOOKS_TIMEOUT: '5s',
        GRIDSYNC_API_TIMEOUTS_CALL_MS: '45s',
        GRIDSYNC_API_LIMITS_MAX_BODY_BYTES: '4096',
        GRIDSYNC_API_LIMITS_RATE_WINDOW_MS: '10s',
        GRIDSYNC_HOOKS_AFTER_SEND: '[/usr/local/bin/notify, --sent]',
      },
      '/',
    );
    expect(config.once.drainTimeout).toBe(90_000);
    expect(config.hooks.timeout).toBe(5000);
    expect(config.api.timeouts.callMs).toBe(45_000);
    expect(config.api.limits.maxBodyBytes).toBe(4096);
    expect(config.api.limits.rateWindowMs).toBe(10_000);
    expect(config.hooks.afterSend).toEqual(['/usr/local/bin/notify', '--sent']);
  });
});

/** The example with its commented-out keys (`# apiKey: ""`) taken in, as a reader would. */
function exampleKeys(): string[] {
  const text = fs.readFileSync(path.join(root, 'config/gridsync.example.yaml'), 'utf8');
  const uncommented = text.replace(/^(\s*)# ?(\s*[\w]+:(?:\s|$))/gm, '$1$2');
  const keys: string[] = [];
  const walk = (node: unknown, prefix: string, inMap: boolean): void => {
    if (Array.isArray(node)) {
      const entries = node.filter((e) => e && typeof e === 'object');
      if (entries.length === 0) keys.push(prefix);
      entries.forEach((e) => walk(e, `${prefix}[]`, false));
    } else if (node && typeof node === 'object') {
      for (const [k, v] of Object.entries(node)) {
        const key = inMap || /^\d+$/.test(k) ? '*' : k;
        walk(v, prefix ? `${prefix}.${key}` : key, false);
      }
    } else keys.push(prefix);
  };
  walk(YAML.parse(uncommented), '', false);
  return [...new Set(keys)].sort();
}

describe('config/gridsync.example.yaml shows every key', () => {
  it('the keys of the example (commented-out ones included) are the schema keys', () => {
    expect(exampleKeys()).toEqual([...new Set(settingPaths())].sort());
  });
});
