/**
 * Unfinished work in the journal that no configured mailbox will ever drive: a mailbox removed
 * from the config, its mailboxId changed, or its outbox folder moved while a parcel was staged or
 * a file claimed into processing. Nothing finishes such a row and, before, nothing said so: `once`
 * exited 0 while a claimed file waited in processing/ for good and a staged parcel stayed on the
 * service until it expired. They are named at start-up and in `once`'s undelivered items; putting
 * the old mailbox or folder back in the config lets a run finish them.
 */
import { INBOUND_UNFINISHED, InboundJournal, OUTBOUND_UNFINISHED, OutboundJournal } from '../journal/index.js';
import type { LeftItem } from './drain.js';
import type { DaemonRuntime } from './runtime.js';

/** At `run`'s start: one error line naming such work (the first 20 items), when there is any. */
export async function reportOrphanedWork(rt: Pick<DaemonRuntime, 'journal' | 'mailboxes' | 'logger'>): Promise<void> {
  const orphans = await orphanedWork(rt);
  if (orphans.length === 0) return;
  rt.logger.error(
    { orphans: orphans.slice(0, 20), count: orphans.length },
    'unfinished work in the journal that no configured mailbox drives',
  );
}

export async function orphanedWork(rt: Pick<DaemonRuntime, 'journal' | 'mailboxes'>): Promise<LeftItem[]> {
  const inbound = new Set(rt.mailboxes.filter((m) => m.inbound).map((m) => m.mailboxId));
  const outboxes = new Set(rt.mailboxes.flatMap((m) => (m.outbound && m.outboxDir ? [`${m.mailboxId}\0${m.outboxDir}`] : [])));
  const left: LeftItem[] = [];
  for (const r of await new InboundJournal(rt.journal).everyInStates(INBOUND_UNFINISHED)) {
    if (inbound.has(r.mailbox_id)) continue;
    left.push({
      mailbox: `mb${r.mailbox_id}`,
      direction: 'in',
      item: `parcel ${r.parcel_id}${r.file_name ? ` (${r.file_name})` : ''}`,
      kind: 'deferred',
      reason: `${r.state} in the journal, but no configured mailbox with an inbox has mailboxId ${r.mailbox_id}: put it back in the config to finish it`,
    });
  }
  for (const r of await new OutboundJournal(rt.journal).everyInStates(OUTBOUND_UNFINISHED)) {
    if (outboxes.has(`${r.mailbox_id}\0${r.outbox_dir}`)) continue;
    left.push({
      mailbox: `mb${r.mailbox_id}`,
      direction: 'out',
      item: r.file_name,
      kind: 'deferred',
      reason: `${r.state} in the journal (${r.processing_path ?? r.source_path}), but no configured mailbox ${r.mailbox_id} has the outbox ${r.outbox_dir}: put it back in the config to finish it`,
    });
  }
  return left;
}
