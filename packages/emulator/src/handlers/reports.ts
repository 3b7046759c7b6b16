/**
 * Reports, computed from the parcels the emulator routed: outbound parcels of a mailbox count as
 * sent, inbound ones (copies included) as received. Scope: the caller's mailbox, or `mailboxId`
 * when given and visible. Windows are half-open [start, end).
 */
import { invalidParameter, iso, objectNotFound, resolveMailbox, type Handler, type HandlerContext } from '../context.js';

const REPORTS = [
  { reportId: 1, name: 'Monthly traffic', description: 'Parcels sent and received per week of a month', active: true },
  { reportId: 2, name: 'Traffic by date', description: 'Parcels sent and received per day', active: true },
  { reportId: 3, name: 'Legacy daily', description: 'Retired', active: false },
];
/** More rows than this in one answer is a request error, not a long computation. */
const MAX_ROWS = 1000;
const DAY_MS = 24 * 3600_000;
const HOUR_MS = 3600_000;
type Period = 'Hour' | 'Day' | 'Week' | 'Month';

interface Counts {
  sent: number;
  received: number;
  totalBytes: number;
}

function counts(ctx: HandlerContext, mailboxId: number, startMs: number, endMs: number): Counts {
  const r = ctx.world.store.db
    .prepare(
      `SELECT coalesce(sum(direction = 'out'), 0) AS sent, coalesce(sum(direction = 'in'), 0) AS received, coalesce(sum(bytes), 0) AS totalBytes
         FROM parcels WHERE mailbox_id = ? AND created_ms >= ? AND created_ms < ?`,
    )
    .get(mailboxId, startMs, endMs) as Counts;
  return r;
}

function interchangeCounts(
  ctx: HandlerContext,
  mailboxId: number,
  startMs: number,
  endMs: number,
  direction: string,
): { count: number; totalBytes: number } {
  const dir = direction === 'InBox' ? " AND i.direction = 'in'" : direction === 'OutBox' ? " AND i.direction = 'out'" : '';
  return ctx.world.store.db
    .prepare(
      `SELECT count(*) AS count, coalesce(sum(p.bytes), 0) AS totalBytes FROM interchanges i JOIN parcels p ON p.parcel_id = i.parcel_id
         WHERE i.mailbox_id = ? AND i.created_ms >= ? AND i.created_ms < ?${dir}`,
    )
    .get(mailboxId, startMs, endMs) as { count: number; totalBytes: number };
}

function report(id: unknown): void {
  const r = REPORTS.find((x) => x.reportId === id);
  if (!r) throw objectNotFound(`report ${String(id)} not found`);
  if (!r.active) throw invalidParameter(`report ${r.reportId} is not active`);
}

/**
 * The boundary `k` periods before `target`. Months are calendar months counted from the target
 * each time, the day clamped to the month's length (31 March → 28 February → 31 January).
 */
function boundary(target: number, k: number, period: Period): number {
  if (period !== 'Month') return target - k * (period === 'Hour' ? HOUR_MS : period === 'Day' ? DAY_MS : 7 * DAY_MS);
  const t = new Date(target);
  const first = new Date(
    Date.UTC(t.getUTCFullYear(), t.getUTCMonth() - k, 1, t.getUTCHours(), t.getUTCMinutes(), t.getUTCSeconds(), t.getUTCMilliseconds()),
  );
  const days = new Date(Date.UTC(first.getUTCFullYear(), first.getUTCMonth() + 1, 0)).getUTCDate();
  first.setUTCDate(Math.min(t.getUTCDate(), days));
  return first.getTime();
}

function range(ctx: HandlerContext, startField: string, endField: string): [number, number] {
  const start = Date.parse(ctx.input[startField] as string);
  const end = Date.parse(ctx.input[endField] as string);
  if (Number.isNaN(start) || Number.isNaN(end)) throw invalidParameter(`${startField}, ${endField}: not valid dates`);
  if (end < start) throw invalidParameter(`${endField}: before ${startField}`);
  if ((end - start) / DAY_MS > MAX_ROWS) throw invalidParameter(`${startField}..${endField}: at most ${MAX_ROWS} days`);
  return [start, end];
}

export const reportHandlers: Record<string, Handler> = {
  'reports.list': (ctx) => ({ data: REPORTS.filter((r) => r.active || ctx.input.showInactive === 'true') }),
  'reports.monthly': (ctx) => {
    report(ctx.input.report);
    const mailboxId = resolveMailbox(ctx, ctx.input.mailboxId);
    const m = new Date(Date.parse(ctx.input.month as string));
    if (Number.isNaN(m.getTime())) throw invalidParameter('month: not a valid date');
    const first = Date.UTC(m.getUTCFullYear(), m.getUTCMonth(), 1);
    const next = Date.UTC(m.getUTCFullYear(), m.getUTCMonth() + 1, 1);
    const rows = [];
    for (let week = 1, start = first; start < next; week++, start += 7 * DAY_MS) {
      rows.push({ week, ...counts(ctx, mailboxId, start, Math.min(start + 7 * DAY_MS, next)) });
    }
    return { data: rows };
  },
  'reports.byDate': (ctx) => {
    report(ctx.input.reportId);
    const mailboxId = resolveMailbox(ctx, ctx.input.mailboxId);
    const [start, end] = range(ctx, 'startDate', 'endDate');
    const rows = [];
    for (let day = Math.floor(start / DAY_MS) * DAY_MS; day <= end; day += DAY_MS)
      rows.push({ date: iso(day), ...counts(ctx, mailboxId, day, day + DAY_MS) });
    return { data: rows };
  },
  'reports.trafficStats': (ctx) => {
    const mailboxId = resolveMailbox(ctx, ctx.input.mailboxId);
    const n = ctx.input.numPeriods as number;
    if (n > MAX_ROWS) throw invalidParameter(`numPeriods: at most ${MAX_ROWS}`);
    const period = ctx.input.period as Period;
    const target = Date.parse(ctx.input.targetTime as string);
    const rows = [];
    for (let i = n - 1; i >= 0; i--) {
      const start = boundary(target, i + 1, period);
      const end = boundary(target, i, period);
      const c = counts(ctx, mailboxId, start, end);
      rows.push({ periodStart: iso(start), periodEnd: iso(end), sentCount: c.sent, receivedCount: c.received, totalBytes: c.totalBytes });
    }
    return { data: rows };
  },
  'reports.instantStats': (ctx) => {
    const mailboxId = resolveMailbox(ctx, ctx.input.mailboxId);
    const now = ctx.world.now();
    const window = (minutes: number): number => {
      if (minutes > 527_040) throw invalidParameter('minutes1, minutes2: at most one year (527040 minutes)');
      const c = counts(ctx, mailboxId, now - minutes * 60_000, now + 1);
      return c.sent + c.received;
    };
    const m1 = ctx.input.minutes1 as number;
    const m2 = ctx.input.minutes2 as number;
    return { data: { window1Minutes: m1, window1Count: window(m1), window2Minutes: m2, window2Count: window(m2) } };
  },
  'reports.interchangeStats': (ctx) => {
    const mailboxId = resolveMailbox(ctx, ctx.input.mailboxId);
    const [start, end] = range(ctx, 'startTime', 'endTime');
    const direction = ctx.input.direction as string;
    const rows = [];
    let s = start;
    do {
      const e = Math.min(s + DAY_MS, end);
      // The last window includes its end, so that start = end still counts that instant.
      rows.push({
        periodStart: iso(s),
        periodEnd: iso(e),
        ...interchangeCounts(ctx, mailboxId, s, e === end ? end + 1 : e, direction),
        direction,
      });
      s = e;
    } while (s < end);
    return { data: rows };
  },
  'reports.mailboxStats': (ctx) => {
    const mailboxId = resolveMailbox(ctx, ctx.input.mailboxId);
    const { db } = ctx.world.store;
    const p = db.prepare('SELECT count(*) AS n, coalesce(sum(bytes), 0) AS b FROM parcels WHERE mailbox_id = ?').get(mailboxId) as {
      n: number;
      b: number;
    };
    const ix = db.prepare('SELECT count(*) AS n FROM interchanges WHERE mailbox_id = ?').get(mailboxId) as { n: number };
    const partners = db
      .prepare(
        `SELECT count(*) AS n FROM interconnects i WHERE i.status = 'Active'
           AND (i.grid_id_from IN (SELECT grid_id FROM grid_ids WHERE mailbox_id = ?) OR i.grid_id_to IN (SELECT grid_id FROM grid_ids WHERE mailbox_id = ?))`,
      )
      .get(mailboxId, mailboxId) as { n: number };
    return {
      data: {
        mailboxId,
        totalParcels: p.n,
        totalInterchanges: ix.n,
        totalBytes: p.b,
        activePartners: partners.n,
        reportGeneratedAt: iso(ctx.world.now()),
      },
    };
  },
  'reports.mailboxInterchangeStats': (ctx) => {
    const mailboxId = resolveMailbox(ctx, ctx.input.mailboxId);
    const now = new Date(ctx.world.now());
    const start = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
    const end = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
    const { db } = ctx.world.store;
    const q = (dir: string): number =>
      (
        db
          .prepare('SELECT count(*) AS n FROM interchanges WHERE mailbox_id = ? AND direction = ? AND created_ms >= ? AND created_ms < ?')
          .get(mailboxId, dir, start, end) as { n: number }
      ).n;
    const bytes = interchangeCounts(ctx, mailboxId, start, end, 'NoDir').totalBytes;
    return { data: { sent: q('out'), received: q('in'), totalBytes: bytes, period: iso(start).slice(0, 7) } };
  },
};
