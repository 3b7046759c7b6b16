/** The config schema takes its defaults from src/config/defaults.ts: a minimal config parses to them. */
import { describe, expect, it } from 'vitest';
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
