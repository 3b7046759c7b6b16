/** The inbound counters and the `inbound:*` events that tell them: one place, so the two never disagree. */
import type { EventBus, PipelineEvents } from '../events/index.js';
import type { InboundCycleResult, InboundTallyDetail } from './types.js';

/** Adds to the cycle's counters and tells the subscribers (`inbound:*` events). */
export function tallyInbound(
  events: EventBus<PipelineEvents>,
  mailbox: string,
  result: InboundCycleResult,
  key: Exclude<keyof InboundCycleResult, 'bytes'>,
  n = 1,
  detail: InboundTallyDetail = {},
): void {
  if (n === 0) return;
  result[key] += n;
  switch (key) {
    case 'confirmed':
      result.bytes += detail.bytes ?? 0;
      events.emit('inbound:received', {
        mailbox,
        count: n,
        bytes: detail.bytes ?? 0,
        ...(detail.item ? { item: detail.item } : {}),
      });
      return;
    case 'failed':
    case 'deferred':
      events.emit(`inbound:${key}`, {
        mailbox,
        count: n,
        ...(detail.reason !== undefined ? { reason: detail.reason } : {}),
        ...(detail.code !== undefined ? { code: detail.code } : {}),
        ...(detail.parcelId !== undefined ? { parcelId: detail.parcelId } : {}),
      });
      return;
    case 'listed':
      events.emit('inbound:listed', { mailbox, count: n, bytes: detail.bytes ?? 0 });
      return;
    case 'unreadable':
      // Reported by the listing (log) and in `once`'s summary; no event of its own yet.
      return;
    default:
      events.emit(`inbound:${key}`, { mailbox, count: n });
  }
}
