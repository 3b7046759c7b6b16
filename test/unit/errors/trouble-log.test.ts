// A failure repeating at every rescan or lease round: one line when it starts (its code), debug
// while it repeats, one line when it ends (how long, how many not told); another code is another trouble.
import { describe, expect, it } from 'vitest';
import { JournalUnavailableError } from '../../../src/journal/unavailable-error.js';
import { TroubleLog, troubleStep } from '../../../src/errors/index.js';
import { recorder } from '../../helpers/log-recorder.js';

describe('troubleStep', () => {
  it('a success without a trouble says nothing', () => {
    expect(troubleStep(undefined, undefined, 5)).toEqual({ trouble: undefined, lines: [] });
  });

  it('starts, counts the repetitions of the same code, ends with how long and how many', () => {
    let s = troubleStep(undefined, 'JOURNAL_UNAVAILABLE', 100);
    expect(s.lines).toEqual([{ kind: 'started', code: 'JOURNAL_UNAVAILABLE' }]);
    s = troubleStep(s.trouble, 'JOURNAL_UNAVAILABLE', 200);
    s = troubleStep(s.trouble, 'JOURNAL_UNAVAILABLE', 300);
    expect(s.lines).toEqual([{ kind: 'repeated', code: 'JOURNAL_UNAVAILABLE', repeats: 2 }]);
    s = troubleStep(s.trouble, undefined, 1_100);
    expect(s).toEqual({ trouble: undefined, lines: [{ kind: 'ended', code: 'JOURNAL_UNAVAILABLE', durationMs: 1_000, suppressed: 2 }] });
  });

  it('another code ends the trouble under way and starts its own', () => {
    const first = troubleStep(undefined, 'JOURNAL_UNAVAILABLE', 0);
    const s = troubleStep(first.trouble, 'ENOSPC', 50);
    expect(s.lines).toEqual([
      { kind: 'ended', code: 'JOURNAL_UNAVAILABLE', durationMs: 50, suppressed: 0 },
      { kind: 'started', code: 'ENOSPC' },
    ]);
    expect(s.trouble).toEqual({ code: 'ENOSPC', since: 50, repeats: 0 });
  });
});

describe('TroubleLog', () => {
  it('writes the start at its level with the error’s fields, repetitions at debug, the end at info', () => {
    const log = recorder();
    let now = 0;
    const trouble = new TroubleLog({
      logger: log,
      level: 'warn',
      started: 'round failed',
      ended: 'rounds get through again',
      now: () => now,
    });
    const err = new JournalUnavailableError('postgres://db/x', 'connection refused', 'ECONNREFUSED');
    for (let i = 0; i < 10; i++, now += 1_000) trouble.failed(err, { mailboxId: 7 });
    trouble.ok();
    trouble.ok();
    expect(log.lines.map((l) => [l.level, l.msg])).toEqual([
      ['warn', 'round failed'],
      ...Array.from({ length: 9 }, () => ['debug', 'round failed']),
      ['info', 'rounds get through again'],
    ]);
    expect(log.lines[0]?.obj).toMatchObject({ mailboxId: 7, code: 'JOURNAL_UNAVAILABLE', dbCode: 'ECONNREFUSED' });
    expect(log.lines.at(-1)?.obj).toEqual({ code: 'JOURNAL_UNAVAILABLE', durationMs: 10_000, suppressed: 9 });
  });

  it('the end line carries what ok() is given; a trouble ended by another code gets none of the new failure’s fields', () => {
    const log = recorder();
    let now = 0;
    const trouble = new TroubleLog({ logger: log, level: 'error', started: 'cycle failed', ended: 'cycles get through', now: () => now });
    trouble.failed(new JournalUnavailableError('postgres://db/x', 'connection refused', 'ECONNREFUSED'));
    now = 500;
    trouble.failed(Object.assign(new Error('disk full'), { code: 'ENOSPC', path: '/var/x' }));
    now = 800;
    trouble.ok({ after: 2 });
    expect(log.lines.map((l) => [l.level, l.obj])).toEqual([
      ['error', expect.objectContaining({ code: 'JOURNAL_UNAVAILABLE' })],
      ['info', { code: 'JOURNAL_UNAVAILABLE', durationMs: 500, suppressed: 0 }],
      ['error', expect.objectContaining({ code: 'ENOSPC', path: '/var/x' })],
      ['info', { after: 2, code: 'ENOSPC', durationMs: 300, suppressed: 0 }],
    ]);
  });
});
