/**
 * The metrics, fed by the pipelines' events as they happen; only what the events cannot say (free
 * space of the folders) is sampled, at scrape time.
 */
import fs from 'node:fs';
import type { EventBus, PipelineEvents } from '../events/index.js';
import type { DaemonMetrics } from './metrics.js';
import type { DaemonRuntime } from './runtime.js';

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
  events.on('inbound:waiting', ({ mailbox, oldestAgeSeconds }) => metrics.oldestWaiting.set({ mailbox }, oldestAgeSeconds));
}

/** Free space of every folder gridsync writes to (the disk-headroom alert), labelled by the mailbox's name. */
export async function sampleFreeSpace(rt: DaemonRuntime, metrics: DaemonMetrics): Promise<void> {
  const folders: [Record<string, string>, string | undefined][] = [[{ folder: 'stateDir' }, rt.config.stateDir]];
  rt.config.mailboxes.forEach((m, i) => {
    // Before the daemon knows a mailbox (the service not reached yet) its folders wait for the next scrape.
    const mailbox = rt.mailboxes[i]?.name;
    if (mailbox === undefined) return;
    folders.push(
      [{ mailbox, folder: 'inbox' }, m.inbox?.dir],
      [{ mailbox, folder: 'sentDir' }, m.outbox?.sentDir],
      [{ mailbox, folder: 'errorDir' }, m.outbox?.errorDir],
    );
  });
  for (const [labels, dir] of folders) {
    if (!dir) continue;
    try {
      const st = await fs.promises.statfs(dir);
      metrics.freeBytes.set(labels, st.bavail * st.bsize);
    } catch {
      // A folder that is not there yet is reported by readiness and doctor, not here.
    }
  }
}
