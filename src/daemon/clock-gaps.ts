/**
 * Where a time zone's clock jumps forward (daylight saving time begins, or the zone moves its
 * offset). croner, like Vixie cron, lets the local times such a gap swallows pass without a run
 * when an expression has a `*` or a step in its time fields: `0-59/20 2 * * *` would open no
 * transfer window at all on the night Europe/Berlin skips 02:00–03:00. The scheduler asks here
 * whether an expression named a skipped time, to open its window when the gap ends instead.
 */
import { Cron } from 'croner';

export interface ClockGap {
  /** The first instant after the gap (03:00 local on a night that skips 02:00–03:00). */
  readonly endMs: number;
  readonly lengthMs: number;
  /** The zone's UTC offset just before the gap. */
  readonly offsetBeforeMs: number;
}

const formats = new Map<string, Intl.DateTimeFormat>();

/** The UTC offset of `zone` at `atMs` (whole seconds); the process's own zone when undefined. */
function utcOffsetMs(zone: string | undefined, atMs: number): number {
  const at = Math.floor(atMs / 1000) * 1000;
  if (zone === undefined) return -new Date(at).getTimezoneOffset() * 60_000;
  let format = formats.get(zone);
  if (!format) {
    const numeric = 'numeric' as const;
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: numeric,
      month: numeric,
      day: numeric,
      hour: numeric,
      minute: numeric,
      second: numeric,
    });
    formats.set(zone, format);
  }
  const parts = format.formatToParts(at);
  const part = (type: Intl.DateTimeFormatPartTypes): number => Number(parts.find((p) => p.type === type)?.value);
  return Date.UTC(part('year'), part('month') - 1, part('day'), part('hour'), part('minute'), part('second')) - at;
}

/** The zone's clock jumping forward in (fromMs, toMs], to the second; undefined when it does not. */
export function clockGapIn(zone: string | undefined, fromMs: number, toMs: number): ClockGap | undefined {
  const before = utcOffsetMs(zone, fromMs);
  const after = utcOffsetMs(zone, toMs);
  if (after <= before) return undefined;
  let lo = Math.floor(fromMs / 1000) * 1000;
  let hi = Math.floor(toMs / 1000) * 1000;
  while (hi - lo > 1000) {
    const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
    if (utcOffsetMs(zone, mid) === before) lo = mid;
    else hi = mid;
  }
  return { endMs: hi, lengthMs: utcOffsetMs(zone, hi) - before, offsetBeforeMs: before };
}

/** Whether `expression` names a local time that `gap` skipped. */
export function namesSkippedTime(expression: string, gap: ClockGap): boolean {
  // Read at the offset before the gap, the skipped local times are the instants [endMs, endMs + lengthMs).
  const shadow = new Cron(expression, { utcOffset: Math.round(gap.offsetBeforeMs / 60_000) });
  const next = shadow.nextRun(new Date(gap.endMs - 1000));
  return next !== null && next.getTime() < gap.endMs + gap.lengthMs;
}
