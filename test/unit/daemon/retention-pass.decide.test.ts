// The decisions behind the retention pass: when it is due (at most daily, a record from a clock set
// far otherwise does not hold it back for a year), when our clock is trusted, and how long sent rows
// stay for the duplicate check.
import { describe, expect, it } from 'vitest';
import { ConfigSchema } from '../../../src/config/schema.js';
import { sentRowsKeptMs } from '../../../src/daemon/retention.js';
import { decideRetention, RETENTION_CLOCK_TOLERANCE_MS, RETENTION_EVERY_MS } from '../../../src/daemon/retention-pass.js';

const NOW = Date.parse('2026-12-01T12:00:00Z');
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe('decideRetention', () => {
  it.each([
    ['no pass recorded', undefined, 0, { run: true }],
    ['the last pass a day ago', NOW - DAY, 0, { run: true }],
    ['the last pass an hour ago', NOW - HOUR, 0, { run: false, why: 'recent', nextAt: NOW - HOUR + RETENTION_EVERY_MS }],
    [
      'the last pass a few seconds ahead (another host of a shared journal)',
      NOW + 5_000,
      0,
      { run: false, why: 'recent', nextAt: NOW + 5_000 + DAY },
    ],
    ['the last pass recorded a year ahead', NOW + 365 * DAY, 0, { run: true }],
    ['no dated answer yet', NOW - DAY, undefined, { run: false, why: 'clock unknown' }],
    ['our clock a year ahead', NOW - DAY, -365 * DAY, { run: false, why: 'clock skewed', offsetMs: -365 * DAY }],
    [
      'our clock just past the tolerance behind',
      undefined,
      RETENTION_CLOCK_TOLERANCE_MS + 1,
      { run: false, why: 'clock skewed', offsetMs: RETENTION_CLOCK_TOLERANCE_MS + 1 },
    ],
    ['our clock at the tolerance', undefined, -RETENTION_CLOCK_TOLERANCE_MS, { run: true }],
  ])('%s', (_what, last, offset, expected) => {
    expect(decideRetention(last, NOW, offset)).toEqual(expected);
  });

  it('a pass not due yet is quiet whatever the clock shows (a cron `once` every 5 minutes does not warn each time)', () => {
    expect(decideRetention(NOW - HOUR, NOW, -365 * DAY)).toMatchObject({ why: 'recent' });
  });
});

describe('sentRowsKeptMs', () => {
  const config = (outboxes: Record<string, unknown>[], journalDays = 90) =>
    ConfigSchema.parse({
      api: { baseUrl: 'embedded' },
      stateDir: '/var/lib/gridsync',
      retention: { journalDays },
      mailboxes: outboxes.map((o, i) => ({ outbox: { dir: `/srv/out${i}`, sentDir: `/srv/sent${i}`, errorDir: `/srv/err${i}`, ...o } })),
    });

  it('is journalDays when every duplicate window is shorter', () => {
    expect(sentRowsKeptMs(config([{}, { duplicateWindowMs: '30d' }]))).toBe(90 * DAY);
  });

  it('is the longest duplicate window of an outbox that rejects duplicates, when longer', () => {
    expect(sentRowsKeptMs(config([{ duplicateWindowMs: '120d' }, { duplicateWindowMs: '200d', duplicates: 'allow' }]))).toBe(120 * DAY);
  });
});
