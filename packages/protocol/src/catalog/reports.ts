/** Reports (8). docs/wire.md#catalog. `/v2/reports/{showInactive}` only matches true/false. */
import { z } from 'zod';
import { DateTime, IntId, MonthlyReportRow, StatisticsPeriod, TrafficStatsRow } from '../wire/index.js';
import { defineGroup } from './endpoint.js';

export const reports = defineGroup('Reports', 'reports', {
  list: {
    method: 'GET',
    path: '/v2/reports/{showInactive}',
    request: z.object({ showInactive: z.enum(['true', 'false']) }).loose(),
    response: z.array(z.object({ reportId: IntId, name: z.string(), description: z.string().nullish(), active: z.boolean() }).loose()),
    summary: 'The available reports (inactive ones too with `true`).',
  },
  monthly: {
    method: 'POST',
    path: '/v2/reports/monthly',
    request: z.object({ report: IntId, month: DateTime }).loose(),
    response: z.array(MonthlyReportRow),
    summary: 'A monthly report by week; only the year and month of `month` count.',
  },
  byDate: {
    method: 'POST',
    path: '/v2/reports/bydate',
    request: z.object({ reportId: IntId, startDate: DateTime, endDate: DateTime }).loose(),
    response: z.array(z.object({ date: DateTime, sent: z.number().int(), received: z.number().int(), totalBytes: z.number() }).loose()),
    summary: 'A report per day between two dates.',
  },
  trafficStats: {
    method: 'POST',
    path: '/v2/reports/traffic-stats',
    request: z.object({ targetTime: DateTime, numPeriods: z.number().int().positive(), period: StatisticsPeriod }).loose(),
    response: z.array(TrafficStatsRow),
    summary: 'Traffic per period going back from targetTime, oldest first.',
  },
  instantStats: {
    method: 'POST',
    path: '/v2/reports/instant-stats',
    request: z.object({ minutes1: z.number().int().positive(), minutes2: z.number().int().positive() }).loose(),
    response: z
      .object({
        window1Minutes: z.number().int(),
        window1Count: z.number().int(),
        window2Minutes: z.number().int(),
        window2Count: z.number().int(),
      })
      .loose(),
    summary: 'Parcel counts in two recent windows.',
  },
  interchangeStats: {
    method: 'POST',
    path: '/v2/reports/interchange-stats',
    request: z.object({ startTime: DateTime, endTime: DateTime, direction: z.enum(['InBox', 'OutBox', 'NoDir']) }).loose(),
    response: z.array(
      z
        .object({ periodStart: DateTime, periodEnd: DateTime, count: z.number().int(), totalBytes: z.number(), direction: z.string() })
        .loose(),
    ),
    summary: 'Interchange counts and bytes per period.',
  },
  mailboxStats: {
    method: 'GET',
    path: '/v2/reports/mailbox-stats',
    request: z.object({}).loose(),
    response: z
      .object({
        mailboxId: IntId,
        totalParcels: z.number().int(),
        totalInterchanges: z.number().int(),
        totalBytes: z.number(),
        activePartners: z.number().int(),
        reportGeneratedAt: DateTime,
      })
      .loose(),
    summary: 'Totals of the caller’s mailbox.',
  },
  mailboxInterchangeStats: {
    method: 'GET',
    path: '/v2/reports/mailbox-interchange-stats',
    request: z.object({}).loose(),
    response: z.object({ sent: z.number().int(), received: z.number().int(), totalBytes: z.number(), period: z.string() }).loose(),
    summary: 'Interchanges sent and received by the caller’s mailbox.',
  },
});
