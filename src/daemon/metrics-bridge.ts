/**
 * The metrics, fed by the pipelines' events as they happen; only what the events cannot say (free
 * space of the folders) is sampled, at scrape time.
 */
import fs from 'node:fs';
import type { EventBus, PipelineEvents } from '../events/index.js';
import type { DaemonMetrics } from './metrics.js';
import type { DaemonConfig } from './runtime.js';

export function feedMetrics(events: EventBus<PipelineEvents>, metrics: DaemonMetrics): void {
  for (const direction of ['in', 'out'] as const) {
    const prefix = direction === 'in' ? 'inbound' : 'outbound';
    events.on(direction === 'in' ? 'inbound:received' : 'outbound:sent', ({ mailbox, count, bytes }) => {
      metrics.transfers.inc({ direction, mailbox }, count);
      metrics.bytes.inc({ direction, mailbox }, bytes);
    });
    events.on(`${prefix}:failed`, ({ mailbox, count }) => metrics.failures.inc({ direction, mailbox, kind: 'failed' }, count));
    events.on(`${prefix}:deferred`, ({ mailbox, count }) => metrics.deferred.inc({ direction, mailbox }, count));
  }
  events.on('outbound:rejected', ({ mailbox, count }) => metrics.failures.inc({ direction: 'out', mailbox, kind: 'rejected' }, count));
}

/** Free space of every folder gridsync writes to (the disk-headroom alert). */
export async function sampleFreeSpace(config: DaemonConfig, metrics: DaemonMetrics): Promise<void> {
  const folders: [string, string, string | undefined][] = [['', 'stateDir', config.stateDir]];
  for (const m of config.mailboxes) {
    const name = m.name ?? '';
    folders.push([name, 'inbox', m.inbox?.dir], [name, 'sentDir', m.outbox?.sentDir], [name, 'errorDir', m.outbox?.errorDir]);
  }
  for (const [mailbox, folder, dir] of folders) {
    if (!dir) continue;
    try {
      const st = await fs.promises.statfs(dir);
      metrics.freeBytes.set({ mailbox, folder }, st.bavail * st.bsize);
    } catch {
      // A folder that is not there yet is reported by readiness and doctor, not here.
    }
  }
}
