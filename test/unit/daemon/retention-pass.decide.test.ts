// The decision behind the retention pass: when it is due (at most daily; a record from a clock set
// far otherwise does not hold it back for a year).
import { describe, expect, it } from 'vitest';
import { decideRetention, RETENTION_EVERY_MS } from '../../../src/daemon/retention-pass.js';

const NOW = Date.parse('2026-12-01T12:00:00Z');
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe('decideRetention', () => {
  it.each([
    ['no pass recorded', undefined, { run: true }],
    ['the last pass a day ago', NOW - DAY, { run: true }],
    ['the last pass an hour ago', NOW - HOUR, { run: false, why: 'recent', nextAt: NOW - HOUR + RETENTION_EVERY_MS }],
    ['the last pass recorded a year ahead', NOW + 365 * DAY, { run: true }],
  ])('%s', (_what, last, expected) => {
    expect(decideRetention(last, NOW)).toEqual(expected);
  });
});
