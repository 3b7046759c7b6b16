/**
 * The config schema takes its defaults from src/config/defaults.ts: a minimal config parses to them;
 * and the example config, which says it shows every key with its default, sets no other value.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { DEFAULTS } from '../../../src/config/defaults.js';
import { ConfigSchema } from '../../../src/config/schema.js';

describe('defaults live in one place', () => {
  const cfg = ConfigSchema.parse({
    api: { baseUrl: 'embedded' },
    stateDir: '/var/lib/gridsync',
    mailboxes: [{ inbox: { dir: '/srv/in' }, outbox: { dir: '/srv/out', sentDir: '/srv/sent', errorDir: '/srv/err' } }],
  });
  const mb = cfg.mailboxes[0];

  it('inbox, outbox, api, http, schedule and shutdown defaults are those of defaults.ts', () => {
    const { minFreeBytes, maxAttempts, concurrency, collision, doneSuffix, redelivery } = DEFAULTS.inbox;
    expect(mb?.inbox).toMatchObject({ minFreeBytes, maxAttempts, concurrency, collision, doneSuffix, redelivery });
    const { reconcileSlackMs: _notAKey, ignore, ...outbox } = DEFAULTS.outbox;
    expect(mb?.outbox).toMatchObject({ ...outbox, ignore: [...ignore] });
    expect(cfg.api).toMatchObject({
      maxAttempts: DEFAULTS.api.maxAttempts,
      connections: DEFAULTS.api.connections,
      timeouts: DEFAULTS.api.timeouts,
    });
    expect(cfg.http).toEqual(DEFAULTS.http);
    expect(cfg.schedule.poll).toBe(DEFAULTS.schedule.pollMs);
    expect(cfg.shutdownTimeout).toBe(DEFAULTS.shutdownTimeoutMs);
    expect(cfg.retention.journalDays).toBe(DEFAULTS.retention.journalDays);
  });
});

/** Paths where two parsed configs differ: `mailboxes.0.outbox.stableMs: 2000 ≠ 1000`. */
function differences(a: unknown, b: unknown, at = ''): string[] {
  if (a && typeof a === 'object' && b && typeof b === 'object' && !Array.isArray(a)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].flatMap((k) =>
      differences((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], at ? `${at}.${k}` : k),
    );
  }
  return JSON.stringify(a) === JSON.stringify(b) ? [] : [`${at}: ${JSON.stringify(a)} ≠ ${JSON.stringify(b)}`];
}

describe('config/gridsync.example.yaml ("every config key, with its default")', () => {
  it('each value it sets is the default: the example parses to what its required keys alone parse to', () => {
    const example = YAML.parse(fs.readFileSync(path.resolve(import.meta.dirname, '../../../config/gridsync.example.yaml'), 'utf8')) as {
      api: { baseUrl: string };
      stateDir: string;
      mailboxes: { mailboxId: number; name: string; inbox: { dir: string }; outbox: { dir: string; sentDir: string; errorDir: string } }[];
    };
    const m = example.mailboxes[0];
    if (!m) throw new Error('the example has no mailbox');
    const required = {
      api: { baseUrl: example.api.baseUrl },
      stateDir: example.stateDir,
      mailboxes: [
        {
          mailboxId: m.mailboxId,
          name: m.name,
          inbox: { dir: m.inbox.dir },
          outbox: { dir: m.outbox.dir, sentDir: m.outbox.sentDir, errorDir: m.outbox.errorDir },
        },
      ],
    };
    const shown = ConfigSchema.parse(example);
    expect(differences(shown, ConfigSchema.parse(required))).toEqual([]);
    // The comparison sees a value that is not the default.
    expect(differences(ConfigSchema.parse({ ...example, shutdownTimeout: '31s' }), shown)).toEqual(['shutdownTimeout: 31000 ≠ 30000']);
  });
});
